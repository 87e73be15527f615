package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/matrixgen/matrixgen"
)

var schemaCommand = command{
	summary: "print the run file format as a JSON Schema",
	usage: `
Usage: matrixgen schema

Prints the JSON Schema of run files (schema 1), derived from the Go types
matrixgen decodes, for other tools that write runs matrixgen publishes.
Check files with 'matrixgen validate'.
`,
	flags: func(*flag.FlagSet) func([]string, io.Writer) error {
		return func(args []string, stdout io.Writer) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected arguments %q", args)
			}
			s, err := matrixgen.Schema()
			if err != nil {
				return err
			}
			_, err = stdout.Write(s)
			return err
		}
	},
}

var validateCommand = command{
	summary: "check run files and report every problem",
	usage: `
Usage: matrixgen validate <file.json>...

Decodes each run file as 'matrixgen build' does and reports every problem
with its file, line, column and field. Exits 1 if any file is bad.
`,
	flags: func(*flag.FlagSet) func([]string, io.Writer) error {
		return func(args []string, stdout io.Writer) error {
			if len(args) == 0 {
				return errors.New("name the run files to check")
			}
			var bad []error
			for _, name := range args {
				if _, err := matrixgen.LoadFile(name); err != nil {
					bad = append(bad, err)
					continue
				}
				fmt.Fprintf(stdout, "ok  %s\n", name)
			}
			if len(bad) > 0 {
				return fmt.Errorf("%d of %d files are not valid runs:\n%w", len(bad), len(args), indent(errors.Join(bad...)))
			}
			return nil
		}
	},
}
