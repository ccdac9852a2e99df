//go:build unix

package train

import "syscall"

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
