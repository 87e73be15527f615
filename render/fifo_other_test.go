//go:build !unix

package render

import "errors"

// mkfifo: no named pipes here.
func mkfifo(string) error { return errors.New("no named pipes on this system") }
