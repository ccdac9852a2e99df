package data

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DataDirEnv is the environment variable that names gotrain's data folder:
// MNIST is looked for in its subfolder "mnist".
const DataDirEnv = "GOTRAIN_DATA"

// UserDataDir returns gotrain's per-user data folder: $GOTRAIN_DATA when
// set, else $XDG_DATA_HOME/gotrain, else ~/.local/share/gotrain (on every
// system, so the documented path is the same everywhere).
func UserDataDir() (string, error) {
	if v := os.Getenv(DataDirEnv); v != "" {
		return v, nil
	}
	if v := os.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "gotrain"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("data: no per-user data folder (set %s): %w", DataDirEnv, err)
	}
	return filepath.Join(home, ".local", "share", "gotrain"), nil
}

// MNISTDir returns the folder MNIST's IDX files are read from (and
// downloaded into): dir when it is not empty (a --data-dir flag), else the
// "mnist" subfolder of UserDataDir. It does not check that the files are
// there; LoadMNIST and MNISTMissingError do.
func MNISTDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	base, err := UserDataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "mnist"), nil
}

// ErrMNISTMissing is wrapped by the error of MNISTMissingError.
var ErrMNISTMissing = errors.New("MNIST not found")

// MNISTMissingError says that dir lacks MNIST and how to get it.
func MNISTMissingError(dir string) error {
	return fmt.Errorf("%w in %s: put the four IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, gzipped or not) there, name another folder (gotrain's --data-dir, or $%s for its mnist/ subfolder), or download them into %s (gotrain's --download, or data.DownloadMNIST)", ErrMNISTMissing, dir, DataDirEnv, dir)
}
