//go:build !unix

package site

import "os"

// createFile writes data to a new or truncated file.
func createFile(name string, data []byte) error {
	return os.WriteFile(name, data, 0o644)
}
