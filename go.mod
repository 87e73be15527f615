module github.com/matrixgen/matrixgen

go 1.26
