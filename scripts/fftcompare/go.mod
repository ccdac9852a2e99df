module github.com/gotrain/gotrain/scripts/fftcompare

go 1.26.8

replace github.com/gotrain/gotrain => ../..

require (
	github.com/gotrain/gotrain v0.0.0-00010101000000-000000000000
	gonum.org/v1/gonum v0.17.0
)

require golang.org/x/sys v0.49.0 // indirect
