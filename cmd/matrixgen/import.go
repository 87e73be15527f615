package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/importer"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/regular"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/stats"
)

var importCommand = command{
	args:    true,
	summary: "convert another tool's results into a run file",
	usage: `
Usage: matrixgen import <format> <file>... [options]

Formats:
  llm-inference-bench   one benchmark_results.json (the tool behind the sample run's source page)
  vllm-bench-serve      vllm bench serve --save-result files, one per (input length,
                        concurrency) point; several make one matrix

Figures are carried over as the tool measured them (seconds become
milliseconds); what the format lacks is left empty. The run file gets notes
(<id>.md) saying where it came from.
`,
	examples: `
  matrixgen import llm-inference-bench benchmark_results.json
  matrixgen import vllm-bench-serve results/*.json -engine sglang -id sglang-h100
`,
	flags: func(fs *flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		out := fs.String("o", "runs", "runs `folder` to write into")
		id := fs.String("id", "", "run `id` (file name); default: <date>-<model>-<tool>")
		engine := fs.String("engine", "", "the `engine` that served the results (vllm, sglang, …), when the files do not say")
		return func(args []string, stdout, stderr io.Writer) error {
			if len(args) < 2 {
				return usagef("name a format and at least one file")
			}
			format, files := args[0], args[1:]
			if format != "llm-inference-bench" && format != "vllm-bench-serve" {
				return usagef("unknown format %q (want llm-inference-bench or vllm-bench-serve)", format)
			}
			var err error
			datas := make([][]byte, len(files))
			for i, f := range files {
				if datas[i], err = readInput(f); err != nil {
					return err
				}
			}
			var res importer.Result
			if format == "llm-inference-bench" {
				if len(files) != 1 {
					return usagef("llm-inference-bench: one benchmark_results.json at a time")
				}
				res, err = importer.LLMInferenceBench(files[0], datas[0])
			} else {
				res, err = importer.VLLMBenchServe(files, datas, *engine)
			}
			if err != nil {
				return err
			}
			return writeImport(res, *out, *id, format, stdout)
		}
	},
}

func writeImport(res importer.Result, dir, id, format string, stdout io.Writer) error {
	r := res.Run
	if id == "" {
		date := "undated"
		if !r.StartedAt.IsZero() {
			date = r.StartedAt.UTC().Format("2006-01-02-1504")
		}
		id = date + "-" + idPart(r.Model.Name, 64, "model") + "-" + format
	}
	if !matrixgen.ValidID(id) {
		return fmt.Errorf("run id %q: want %s", id, matrixgen.IDRule)
	}
	file := filepath.Join(dir, id+".json")
	if _, err := os.Stat(file); err == nil {
		return fmt.Errorf("%s exists; choose another -id", file)
	}
	stats.SetInterval(r) // as the runner saves a run: a build need not compute it
	if err := runfile.Save(file, r); err != nil {
		return err
	}
	notes := strings.Join(res.Notes, "\n\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, id+".md"), []byte(notes), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %s and %s into %s\n", plural.Count(len(r.Prefill), "prefill row", "prefill rows"), plural.Count(len(r.Decode), "decode cell", "decode cells"), file)
	return nil
}

// maxImportBytes bounds a result file to import: other tools' files (with
// per-request details) run larger than a run file.
const maxImportBytes = 64 << 20

// readInput reads a result file to import: a regular file (a device or a
// FIFO could feed it without end) of at most maxImportBytes, opened once
// and what was opened checked.
func readInput(name string) ([]byte, error) {
	f, info, err := regular.OpenPath(name)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file (import reads result files, not devices, pipes or standard input)", term.Name(name))
	}
	return regular.Read(f, info, maxImportBytes, term.Name(name), "a file to import")
}
