//go:build unix

package data

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDownloadMNISTUsualPermissions checks that downloaded files get the
// permissions os.Create would give (0644 under umask 022), not the 0600 of
// a temporary file.
func TestDownloadMNISTUsualPermissions(t *testing.T) {
	content := []byte("alpha")
	gz := gzipped(t, content)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(gz) }))
	defer srv.Close()
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	sums := map[string]string{"a-idx1-ubyte": md5hex(content)}
	if err := DownloadMNIST(context.Background(), dir, []string{srv.URL + "/"}, sums, srv.Client()); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "a-idx1-ubyte.gz"))
	if err != nil || st.Mode() != 0o644 {
		t.Errorf("downloaded file: %v (%v), want mode 0644", st.Mode(), err)
	}
}
