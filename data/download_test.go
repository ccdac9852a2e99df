package data

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func md5hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}

// TestDownloadMNIST serves fake files from a loopback server: a broken first
// mirror, a good second one, a corrupt file, and files already present.
func TestDownloadMNIST(t *testing.T) {
	good := map[string][]byte{"a-idx1-ubyte": []byte("alpha"), "b-idx1-ubyte": []byte("bravo")}
	served := map[string][]byte{}
	for n, b := range good {
		served["/good/"+n+".gz"] = gzipped(t, b)
	}
	served["/good/c-idx1-ubyte.gz"] = gzipped(t, []byte("corrupted"))
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if b, ok := served[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	mirrors := []string{srv.URL + "/down/", srv.URL + "/good/"}
	dir := t.TempDir()
	sums := map[string]string{"a-idx1-ubyte": md5hex(good["a-idx1-ubyte"]), "b-idx1-ubyte": md5hex(good["b-idx1-ubyte"])}
	if err := DownloadMNIST(context.Background(), dir, mirrors, sums, srv.Client()); err != nil {
		t.Fatal(err)
	}
	for n := range good {
		if ok, err := fileMD5Is(filepath.Join(dir, n+".gz"), sums[n], true); !ok || err != nil {
			t.Errorf("%s not written correctly: %v", n, err)
		}
	}
	// Present and valid: nothing is fetched again.
	before := requests
	if err := DownloadMNIST(context.Background(), dir, mirrors, sums, srv.Client()); err != nil || requests != before {
		t.Errorf("second download: err %v, %d new requests", err, requests-before)
	}
	// A checksum mismatch on every mirror is an error, and nothing is written.
	bad := map[string]string{"c-idx1-ubyte": md5hex([]byte("the real content"))}
	err := DownloadMNIST(context.Background(), dir, mirrors, bad, srv.Client())
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), dir) {
		t.Errorf("corrupt file: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c-idx1-ubyte.gz")); !os.IsNotExist(err) {
		t.Error("a file failing its checksum was written")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") { // a hidden temporary file
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestDownloadMNISTOffline(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens any more
	err := DownloadMNIST(context.Background(), t.TempDir(), []string{srv.URL + "/"}, map[string]string{"x": "00"}, nil)
	if err == nil || !strings.Contains(err.Error(), "offline?") {
		t.Errorf("err = %v", err)
	}
}
