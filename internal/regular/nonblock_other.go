//go:build !unix

package regular

// nonBlocking is nothing where there are no FIFOs to wait on.
const nonBlocking = 0
