// Package runner is the network side of matrixgen: it will sweep a live
// inference server (`matrixgen run`) and serve a loopback one of known speed
// (`matrixgen sim`). Only this package talks HTTP or imports go-openai;
// render never imports it. It is empty until those commands land.
package runner
