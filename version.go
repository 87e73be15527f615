package matrixgen

// Version is matrixgen's version, recorded in every run it writes.
const Version = "0.1.0-dev"
