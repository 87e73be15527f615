module github.com/matrixgen/matrixgen

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/go-echarts/go-echarts/v2 v2.6.7
	github.com/yuin/goldmark v1.8.7
)

require github.com/sashabaranov/go-openai v1.43.0

require golang.org/x/net v0.63.0
