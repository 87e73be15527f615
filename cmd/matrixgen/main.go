// Command matrixgen measures LLM inference servers and publishes the
// results as static "speed test matrix" pages.
//
//	matrixgen build   # runs/*.json -> public/ (a static site)
package main

import (
	"flag"
	"fmt"
	"github.com/matrixgen/matrixgen/internal/term"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/matrixgen/matrixgen/config"
)

// command is one subcommand: its flags, what it is for, and what it does.
type command struct {
	summary string
	usage   string
	flags   func(fs *flag.FlagSet) func(args []string, stdout io.Writer) error
}

var commands = map[string]command{
	"build":    buildCommand,
	"sim":      simCommand,
	"run":      runCommand,
	"import":   importCommand,
	"serve":    serveCommand,
	"schema":   schemaCommand,
	"validate": validateCommand,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, so tests can call it.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "matrixgen: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	fs := flag.NewFlagSet("matrixgen "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\nOptions:\n", strings.TrimSpace(cmd.usage))
		fs.PrintDefaults()
	}
	do := cmd.flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if err := do(fs.Args(), stdout); err != nil {
		// An error can carry a server's or a file's words: printed, not obeyed.
		fmt.Fprintf(stderr, "matrixgen %s: %s\n", args[0], term.Clean(err.Error()))
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "matrixgen measures LLM inference servers and publishes speed test matrices.")
	fmt.Fprintln(w, "\nUsage: matrixgen <command> [options]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nRun 'matrixgen <command> -h' for a command's options.")
}

// loadConfig reads the configuration file: the default may be absent, one
// named with -config may not.
func loadConfig(fs *flag.FlagSet, name string) (config.Config, error) {
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "config" })
	return config.Load(name, !named)
}
