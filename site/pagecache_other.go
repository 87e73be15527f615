//go:build !linux

package site

const canDropCache = false

func startWriteback(fd int, from int64) {}

func dropCached(name string) {}

func dropCachedBefore(fd int, end int64) {}
