// Command matrixgen measures LLM inference servers and publishes the
// results as static "speed test matrix" pages.
//
//	matrixgen build   # runs/*.json -> public/ (a static site)
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/matrixgen/matrixgen"
	"github.com/matrixgen/matrixgen/bucket"
	"github.com/matrixgen/matrixgen/config"
	"github.com/matrixgen/matrixgen/internal/redact"
	"github.com/matrixgen/matrixgen/internal/suggest"
	"github.com/matrixgen/matrixgen/internal/term"
)

// command is one subcommand: usage is shown above its options, examples
// below them; a command without args refuses arguments before it runs.
type command struct {
	summary, usage, examples string
	args                     bool
	flags                    func(fs *flag.FlagSet) func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"build":    buildCommand,
	"compare":  compareCommand,
	"sim":      simCommand,
	"run":      runCommand,
	"import":   importCommand,
	"serve":    serveCommand,
	"schema":   schemaCommand,
	"validate": validateCommand,
	"version":  versionCommand,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes: a failure, a command line not understood, a compare gate
// that could test nothing, a run compare could not read, and a run
// stopped by Ctrl-C (128 + SIGINT, as a shell says).
const (
	exitFailed     = 1
	exitUsage      = 2
	exitUntestable = 3
	exitUnreadable = 4
	exitStopped    = 130
)

// run is main without the exit. Help asked for goes to stdout with exit
// 0, as gh, hugo and kubectl do; a command line it cannot understand gets
// one line on stderr naming the mistake and where help is, and exit 2.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		usage(stdout)
		return 0
	}
	switch args[0] {
	case "help":
		return help(args[1:], stdout, stderr)
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	name := args[0]
	cmd, ok := commands[name]
	if !ok {
		hint := ""
		if meant := suggest.Nearest(name, commandNames()); meant != "" {
			hint = " (did you mean " + meant + "?)"
		} else if name == "-v" || name == "-V" {
			hint = " (did you mean version?)"
		}
		return mistake(stderr, "matrixgen", fmt.Errorf("unknown command %q%s; the commands are %s", name, hint, strings.Join(commandNames(), ", ")), "matrixgen -h")
	}
	fs := newFlagSet(name)
	do := cmd.flags(fs)
	positional, err := parseFlags(fs, args[1:])
	switch {
	case err != nil:
		err = usageError(err)
	case !cmd.args && len(positional) > 0:
		err = usagef("unexpected arguments %q", positional)
	default:
		err = do(positional, stdout, stderr)
	}
	exit, _ := errors.AsType[exitError](err)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		cmd.help(name, fs, stdout)
		return 0
	case exit.code == exitUsage:
		return mistake(stderr, "matrixgen "+name, exit.err, "matrixgen "+name+" -h")
	}
	fmt.Fprintf(stderr, "matrixgen %s: %s\n", name, printable(err.Error()))
	return cmp.Or(exit.code, exitFailed)
}

// printable is an error's text as every command prints it: secrets hidden
// (an error may quote a -set value, a URL's password, a server's echo of a
// key) and terminal controls neutralised. Every error passes here.
func printable(msg string) string {
	return term.Clean(redact.Text(msg))
}

// parseFlags parses flags before or after the arguments (matrixgen compare
// A B -format markdown), and returns the arguments: the flag package stops
// at the first argument, so it parses again after each one.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, withFlagHint(fs, err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// withFlagHint adds to an unknown flag's error the flag likely meant: the
// nearest by spelling, or the only one whose name starts the other's.
func withFlagHint(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	name = strings.TrimPrefix(name, "-")
	var names, prefixed []string
	fs.VisitAll(func(f *flag.Flag) {
		names = append(names, f.Name)
		if strings.HasPrefix(name, f.Name) || strings.HasPrefix(f.Name, name) {
			prefixed = append(prefixed, f.Name)
		}
	})
	if meant := suggest.Nearest(name, names); meant != "" {
		return fmt.Errorf("%w; did you mean -%s?", err, meant)
	}
	if len(prefixed) == 1 {
		return fmt.Errorf("%w; did you mean -%s?", err, prefixed[0])
	}
	return err
}

// newFlagSet is a command's flag set, silent: a mistake is one line, and
// help goes where it was asked for.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("matrixgen "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// help is `matrixgen help [command]`.
func help(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0 || len(args) == 1 && args[0] == "help":
		usage(stdout)
		return 0
	case len(args) > 1:
		return mistake(stderr, "matrixgen help", fmt.Errorf("one command at a time, not %q", args), "matrixgen -h")
	}
	if _, ok := commands[args[0]]; !ok {
		return mistake(stderr, "matrixgen help", fmt.Errorf("unknown command %q; the commands are %s", args[0], strings.Join(commandNames(), ", ")), "matrixgen -h")
	}
	return run([]string{args[0], "-h"}, stdout, stderr) // as 'matrixgen <command> -h'
}

// mistake says, in one line whatever the error held, what in the command
// line was not understood and where help is.
func mistake(stderr io.Writer, who string, err error, helpCmd string) int {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintf(stderr, "%s: %s (see '%s')\n", who, printable(msg), helpCmd)
	return exitUsage
}

// exitError is an error that ends the command with its own exit status.
type exitError struct {
	err  error
	code int
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// usageError is a command line the command cannot understand; it exits 2.
func usageError(err error) error { return exitError{err, exitUsage} }

func usagef(format string, args ...any) error { return usageError(fmt.Errorf(format, args...)) }

// checkPlaces refuses, as a command-line mistake before any work, a URL
// whose store matrixgen cannot open (gs://, azblob://).
func checkPlaces(places ...string) error {
	for _, p := range places {
		if err := bucket.CheckScheme(p); bucket.IsURL(p) && err != nil {
			return usageError(err)
		}
	}
	return nil
}

// help writes a command's help: usage, every option, examples.
func (c command) help(name string, fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "%s\n\nOptions:\n", strings.TrimSpace(c.usage))
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprintf(w, "  -h, -help\n    \tprint this help\n\nExamples:\n%s\n", strings.TrimRight(strings.TrimLeft(c.examples, "\n"), "\n "))
}

func commandNames() []string { return slices.Sorted(maps.Keys(commands)) }

func usage(w io.Writer) {
	fmt.Fprintln(w, "matrixgen measures LLM inference servers and publishes speed test matrices.")
	fmt.Fprintln(w, "\nUsage: matrixgen <command> [options]\n\nCommands:")
	for _, name := range commandNames() {
		fmt.Fprintf(w, "  %-9s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'matrixgen help <command>' or 'matrixgen <command> -h' for a command's options and examples.")
}

var versionCommand = command{
	summary: "print matrixgen's version",
	usage: `
Usage: matrixgen version

Prints matrixgen's version (the one every run it writes records), the
commit it was built from when the build knew it, and the Go toolchain.
'matrixgen -version' does the same.
`,
	examples: `
  matrixgen version
  matrixgen -version
`,
	flags: func(*flag.FlagSet) func([]string, io.Writer, io.Writer) error {
		return func(args []string, stdout, stderr io.Writer) error {
			_, err := fmt.Fprintln(stdout, versionLine())
			return err
		}
	},
}

// versionLine is "matrixgen 0.1.0-dev (commit 0123456789ab, go1.26.0 linux/amd64)".
func versionLine() string {
	details := []string{}
	if info, ok := debug.ReadBuildInfo(); ok {
		vcs := map[string]string{}
		for _, s := range info.Settings {
			vcs[s.Key] = s.Value
		}
		if rev := vcs["vcs.revision"]; rev != "" {
			rev = "commit " + rev[:min(len(rev), 12)]
			if vcs["vcs.modified"] == "true" {
				rev += ", modified"
			}
			details = append(details, rev)
		}
	}
	details = append(details, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return "matrixgen " + matrixgen.Version + " (" + strings.Join(details, ", ") + ")"
}

// configFile is a command's -config flag; the default file may be absent,
// a file named may not.
type configFile struct {
	name *string
	fs   *flag.FlagSet
}

func configFlag(fs *flag.FlagSet) configFile {
	name := fs.String("config", config.DefaultFile, "configuration `file`; the default may be absent")
	return configFile{name, fs}
}

func (c configFile) named() bool { return flagSet(c.fs, "config") }

func (c configFile) load() (config.Config, error) { return config.Load(*c.name, !c.named()) }

// interruptible is a command's context, cancelled by Ctrl-C or SIGTERM so
// that the command stops within seconds and cleans up after itself.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
