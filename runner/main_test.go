package runner

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for nvidia-smi: with
// MATRIXGEN_FAKE_SMI set to a sim's /sim/power address, it answers the
// runner's queries from the sim's power model, so an end-to-end sweep's
// energy follows the sim's load.
func TestMain(m *testing.M) {
	if url := os.Getenv("MATRIXGEN_FAKE_SMI"); url != "" {
		os.Exit(fakeSMI(url, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeSMI(url string, args []string) int {
	all := strings.Join(args, " ")
	switch {
	case strings.Contains(all, "index,name"):
		lines, err := get(url)
		if err != nil {
			return 1
		}
		for i := range strings.Count(lines, "\n") {
			fmt.Printf("%d, NVIDIA Sim GPU, 97887, 580.95.05, 600.00, 600.00, 5, 16\n", i)
		}
	case strings.Contains(all, "-lms"):
		for {
			lines, err := get(url)
			if err != nil {
				return 1
			}
			fmt.Print(lines)
			time.Sleep(telemetryInterval)
		}
	default:
		fmt.Println("| NVIDIA-SMI 580.95.05   Driver Version: 580.95.05   CUDA Version: 13.0 |")
	}
	return 0
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
