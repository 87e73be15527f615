package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matrixgen/matrixgen/telemetry"
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
	if strings.HasPrefix(filepath.Base(os.Args[0]), "rocm-smi") {
		return fakeROCmSMI(url, args)
	}
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
			time.Sleep(telemetry.Interval)
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

// fakeROCmSMI answers as rocm-smi --json does, one call one answer, with
// the sim's power in the field names of a recent ROCm.
func fakeROCmSMI(url string, args []string) int {
	lines, err := get(url)
	if err != nil {
		return 1
	}
	cards := map[string]map[string]string{}
	for line := range strings.Lines(lines) {
		f := strings.Split(strings.TrimSpace(line), ", ")
		card := map[string]string{"Card Series": "AMD Instinct MI300X", "VRAM Total Memory (B)": "206158430208",
			"Max Graphics Package Power (W)": "750.0"}
		if strings.Contains(strings.Join(args, " "), "--showpower") {
			card = map[string]string{"Current Socket Graphics Package Power (W)": f[1], "sclk clock speed:": "(" + f[2] + "Mhz)",
				"GPU use (%)": f[4], "Temperature (Sensor edge) (C)": f[6], "VRAM Total Used Memory (B)": "1073741824"}
		}
		cards["card"+f[0]] = card
	}
	out, _ := json.Marshal(map[string]any{"system": map[string]string{"Driver version": "6.10.5"}})
	b, _ := json.Marshal(cards)
	if strings.Contains(strings.Join(args, " "), "--showdriverversion") {
		b = append(b[:len(b)-1], append([]byte(","), out[1:]...)...)
	}
	fmt.Println(string(b))
	return 0
}
