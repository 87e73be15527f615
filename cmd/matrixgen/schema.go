package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
)

var schemaCommand = command{
	summary: "print the run file format as a JSON Schema",
	usage: `
Usage: matrixgen schema

Prints the JSON Schema of run files (schema 1), derived from the Go types
matrixgen decodes, for other tools that write runs matrixgen publishes.
Check files with 'matrixgen validate'.
`,
	examples: `
  matrixgen schema > schema/run.schema.json
`,
	flags: func(*flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		return func(args []string, stdout, stderr io.Writer) error {
			s, err := runfile.Schema()
			if err != nil {
				return err
			}
			_, err = stdout.Write(s)
			return err
		}
	},
}

var validateCommand = command{
	args:    true,
	summary: "check run files and report every problem",
	usage: `
Usage: matrixgen validate <file.json | bucket URL>...

Decodes each run file as 'matrixgen build' does and reports every problem
with its file, line, column and field. A bucket URL (s3://lab/runs/) checks
every run file in it. Exits 1 if any file is bad.
`,
	examples: `
  matrixgen validate runs/*.json
  matrixgen validate 's3://lab/runs/?region=eu-west-1'
`,
	flags: func(*flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		return func(args []string, stdout, stderr io.Writer) error {
			if len(args) == 0 {
				return usagef("name the run files to check")
			}
			if err := checkPlaces(args...); err != nil {
				return err
			}
			var bad []error
			checked := 0
			check := func(name, shown string, rename func(string) string) {
				checked++
				if _, err := runfile.Load(name); err != nil {
					bad = append(bad, renamed(err, rename))
					return
				}
				fmt.Fprintf(stdout, "ok  %s\n", term.Name(shown))
			}
			same := func(s string) string { return s }
			for _, arg := range args {
				if !bucket.IsURL(arg) {
					check(arg, arg, same)
					continue
				}
				files, cleanup, err := runFiles(context.Background(), arg, stdout)
				if err != nil {
					return err
				}
				place := strings.TrimSuffix(bucket.Redact(arg), "/") + "/"
				for _, f := range files {
					dir := filepath.Dir(f) + string(filepath.Separator)
					check(f, place+filepath.Base(f), func(s string) string { return strings.ReplaceAll(s, dir, place) })
				}
				cleanup()
			}
			if len(bad) > 0 {
				return fmt.Errorf("%d of %s %s:\n%w", len(bad), plural.Count(checked, "file", "files"),
					plural.Noun(len(bad), "is not a valid run", "are not valid runs"), indent(errors.Join(bad...)))
			}
			return nil
		}
	},
}

// renamed is err with rename applied to its words, each of its joined
// errors apart, so that indent lists every problem of a file on a line of
// its own, as build does.
func renamed(err error, rename func(string) string) error {
	return eachLeaf(err, func(e error) error { return errors.New(rename(e.Error())) })
}
