//go:build !unix

package train

import "errors"

func mkfifo(string) error { return errors.New("FIFOs need a Unix system") }
