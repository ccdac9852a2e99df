package atomicfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// A failed write leaves the previous file as it was.
func Example() {
	dir, _ := os.MkdirTemp("", "atomicfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "predictions.csv")

	if err := atomicfile.WriteFile(path, []byte("prediction\nyes\n")); err != nil {
		fmt.Println(err)
	}
	err := atomicfile.Write(path, func(w io.Writer) error {
		io.WriteString(w, "prediction\n")
		return fmt.Errorf("row 2: not a class")
	})
	fmt.Println("error:", err)
	b, _ := os.ReadFile(path)
	fmt.Printf("file: %q\n", b)

	err = atomicfile.WriteFile(dir, []byte("x"))
	fmt.Println(err == nil)
	// Output:
	// error: row 2: not a class
	// file: "prediction\nyes\n"
	// false
}
