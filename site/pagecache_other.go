//go:build !linux

package site

const canDropCache = false

func startWriteback(fd int) {}

func dropCached(name string) {}

func streamWriteback(fd int, from, behind int64) {}
