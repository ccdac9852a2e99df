package data

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gotrain/gotrain/internal/atomicfile"
)

// MNISTMirrors are the canonical MNIST mirrors DownloadMNIST tries, in order.
var MNISTMirrors = []string{
	"https://ossci-datasets.s3.amazonaws.com/mnist/",
	"https://storage.googleapis.com/cvdf-datasets/mnist/",
}

// MNISTChecksums are the MD5 sums of the four uncompressed MNIST IDX files.
var MNISTChecksums = map[string]string{
	"train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
	"train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
	"t10k-images-idx3-ubyte":  "2646ac647ad5339dbf082846283269ea",
	"t10k-labels-idx1-ubyte":  "27ae3e4e09519cfbb04c329615203637",
}

// maxMNISTFile bounds one downloaded file, compressed or not (the largest,
// train-images, is 47 MB uncompressed).
const maxMNISTFile = 64 << 20

// DownloadMNIST fetches each MNIST file that dir does not already hold with
// the right checksum, as NAME.gz from the first mirror that serves it,
// verifies the MD5 of its uncompressed content against checksums, and writes
// it to dir atomically (temporary file, then rename). A file that fails the
// check is never written. client may be nil (a client with a 60 s timeout).
// It is called only when the user asks for a download.
func DownloadMNIST(ctx context.Context, dir string, mirrors []string, checksums map[string]string, client *http.Client) error {
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data: downloading MNIST: %w", err)
	}
	for name, sum := range checksums {
		if ok, _ := fileMD5Is(filepath.Join(dir, name), sum, false); ok {
			continue
		}
		if ok, _ := fileMD5Is(filepath.Join(dir, name+".gz"), sum, true); ok {
			continue
		}
		var errs []error
		done := false
		for _, m := range mirrors {
			gz, err := fetch(ctx, client, m+name+".gz")
			if err == nil {
				err = checkGzipMD5(gz, sum)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s%s.gz: %w", m, name, err))
				continue
			}
			if err := atomicfile.WriteFile(filepath.Join(dir, name+".gz"), gz); err != nil {
				return fmt.Errorf("data: %w", err)
			}
			done = true
			break
		}
		if !done {
			return fmt.Errorf("data: downloading MNIST %s failed (offline? put the four IDX files, gzipped or not, in %s): %v", name, dir, errs)
		}
	}
	return nil
}

func fetch(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMNISTFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxMNISTFile {
		return nil, fmt.Errorf("larger than %d bytes", maxMNISTFile)
	}
	return b, nil
}

// checkGzipMD5 checks that gz decompresses to content with the given MD5.
func checkGzipMD5(gz []byte, sum string) error {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return fmt.Errorf("not gzip data: %w", err)
	}
	h := md5.New()
	n, err := io.Copy(h, io.LimitReader(zr, maxMNISTFile+1))
	if err != nil {
		return fmt.Errorf("decompressing: %w", err)
	}
	if n > maxMNISTFile {
		return fmt.Errorf("decompresses to more than %d bytes", maxMNISTFile)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("checksum mismatch: MD5 %s, want %s", got, sum)
	}
	return nil
}

// fileMD5Is tells whether the file at path (gunzipped when gz) has MD5 sum.
func fileMD5Is(path, sum string, gz bool) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	if gz {
		return checkGzipMD5(b, sum) == nil, nil
	}
	h := md5.Sum(b)
	return hex.EncodeToString(h[:]) == sum, nil
}
