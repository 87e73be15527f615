//go:build !unix

package site

import "os"

// createFile writes data to a new or truncated file (writeback is for
// Linux's page cache, where the file is written through a descriptor).
func createFile(name string, data []byte, writeback func(fd int, from int64)) error {
	return os.WriteFile(name, data, 0o644)
}
