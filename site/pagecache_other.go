//go:build !linux

package site

const canDropCache = false

// pageCacheOfSystem is nil: the page cache is bounded on Linux alone.
func pageCacheOfSystem() *pageCache { return nil }
