package data_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/gotrain/gotrain/data"
)

// LoadFile reads a Parquet file (here written with Apache Arrow's Go
// library) as it would read the same table in CSV: the text column is
// categorical, its dictionary sorted; the text labels become classes.
func ExampleLoadFile() {
	mem := memory.NewGoAllocator()
	weight := array.NewFloat64Builder(mem)
	weight.AppendValues([]float64{4.2, 30, 3.9}, nil)
	coat := array.NewStringBuilder(mem)
	coat.AppendValues([]string{"short", "long", ""}, []bool{true, true, false}) // a null: missing
	kind := array.NewStringBuilder(mem)
	kind.AppendValues([]string{"cat", "dog", "cat"}, nil)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "weight", Type: arrow.PrimitiveTypes.Float64},
		{Name: "coat", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "kind", Type: arrow.BinaryTypes.String},
	}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{weight.NewArray(), coat.NewArray(), kind.NewArray()}, 3)
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pets.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}

	d, err := data.LoadFile(path, data.CSVOptions{Target: "kind", Classification: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Name, d.Rows, "rows, features", d.FeatureNames)
	fmt.Println("X:", d.X)
	fmt.Println("coat categories:", d.Categories[1])
	fmt.Println("classes:", d.Classes, "Y:", d.Y)
	// Output:
	// pets.parquet 3 rows, features [weight coat]
	// X: [4.2 1 30 0 3.9 NaN]
	// coat categories: [long short]
	// classes: [cat dog] Y: [0 1 0]
}
