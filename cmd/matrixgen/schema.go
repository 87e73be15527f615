package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/internal/plural"
	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/internal/term"
	"github.com/matrixgen/matrixgen/runfile"
	"github.com/matrixgen/matrixgen/site"
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
with its file, line, column and field. A folder (runs) or a bucket URL
(s3://lab/runs/) checks every run file in it, as build reads it. Exits 1
if any file is bad, if two runs' ids differ only in case (a build refuses
them: on a file system that ignores case their pages are one folder), or
if there was no run file to check.

A run whose text holds what looks like a secret (a key in a launch
command or an error's reason: a file written by hand, or by an older
version) gets a warning naming its fields: a site built from it would
publish them. 'matrixgen run' and 'matrixgen import' hide secrets as
<redacted> before they save; do the same in the file.
`,
	examples: `
  matrixgen validate runs/*.json
  matrixgen validate runs
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
			var locals []string // each file checked, for the clashes of their ids
			var renames []func(string) string
			check := func(name, shown string, rename func(string) string) {
				locals, renames = append(locals, name), append(renames, rename)
				e, err := runfile.Load(name)
				if err != nil { // each problem renamed apart, for indent to list each on its own line
					bad = append(bad, eachLeaf(err, func(e error) error {
						return errors.New(rename(e.Error()))
					}))
					return
				}
				if e.Run.Incomplete {
					fmt.Fprintf(stdout, "ok  %s (incomplete: its sweep stopped before it finished; matrixgen run -resume continues it)\n", term.Name(shown))
				} else {
					fmt.Fprintf(stdout, "ok  %s\n", term.Name(shown))
				}
				if fields := secretFields(e.Run); len(fields) > 0 {
					fmt.Fprintf(stderr, "warning: %s: %s %s what looks like a secret, which a site built from it would publish (but in launch_command, which a build hides again): hide it in the file, as <redacted>\n",
						term.Name(shown), strings.Join(fields, ", "), plural.Noun(len(fields), "holds", "hold"))
				}
			}
			for _, arg := range args {
				if info, err := os.Stat(arg); !bucket.IsURL(arg) && (err != nil || !info.IsDir()) {
					check(arg, arg, func(s string) string { return s })
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
			var errs []error
			if len(bad) > 0 {
				errs = append(errs, fmt.Errorf("%d of %s %s:\n%w", len(bad), plural.Count(len(locals), "file", "files"),
					plural.Noun(len(bad), "is not a valid run", "are not valid runs"), indent(errors.Join(bad...))))
			}
			// Valid one by one, refused by a build together.
			if clashes := site.IDClashes(site.Files(locals)); len(clashes) > 0 {
				for i, c := range clashes {
					msg := c.Error()
					for _, rename := range renames {
						msg = rename(msg)
					}
					clashes[i] = errors.New(msg)
				}
				errs = append(errs, fmt.Errorf("a build refuses these runs together:\n%w", indent(errors.Join(clashes...))))
			}
			if len(errs) > 0 {
				return errors.Join(errs...)
			}
			if len(locals) == 0 { // a check of nothing must not pass
				return fmt.Errorf("no run files (*.json) in %s: nothing checked", term.Name(strings.Join(args, ", ")))
			}
			return nil
		}
	},
}

// secretFields are the fields of a run whose text the redaction step would
// change, and the entries of its request's maps the runner would hide.
func secretFields(r *matrixgen.Run) []string {
	var fields []string
	r.EachText(func(field, s string) {
		if redact.Text(s) != s {
			fields = append(fields, field)
		}
	})
	if q := r.Request; q != nil {
		fields = append(fields, secretEntries("request.chat_template_kwargs", q.ChatTemplateKwargs)...)
		fields = append(fields, secretEntries("request.extra", q.Extra)...)
	}
	return fields
}

// secretEntries are the places under v, a request's value at field, that
// the runner hides when it writes a run (runner's redactMap); Run.EachText
// walks no map.
func secretEntries(field string, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			_, isNumber := v[k].(float64)
			_, isBool := v[k].(bool)
			if redact.Text(k) != k || v[k] != nil && !isBool && redact.NamesSecret(k, isNumber) {
				out = append(out, field+"."+redact.Text(k))
				continue
			}
			out = append(out, secretEntries(field+"."+k, v[k])...)
		}
	case []any:
		for i, e := range v {
			out = append(out, secretEntries(field+"["+strconv.Itoa(i)+"]", e)...)
		}
	case string:
		if redact.Text(v) != v {
			out = append(out, field)
		}
	}
	return out
}
