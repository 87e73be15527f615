package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/matrixgen/matrixgen"
)

// TestHelp asks for help every way people do: it comes on stdout with exit
// 0, nothing on stderr, and each command's help names every option with
// what it means and shows examples.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"-h"}, {"-help"}, {"--help"}, {"help"}, {"help", "help"}} {
		code, stdout, stderr := matrixgenCmd(t, args...)
		if code != 0 || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
		for _, name := range commandNames() {
			if !strings.Contains(stdout, "  "+name+" ") || !strings.Contains(stdout, commands[name].summary) {
				t.Errorf("%q: the overview lacks %s:\n%s", args, name, stdout)
			}
		}
	}
	for _, name := range commandNames() {
		fs := newFlagSet(name)
		commands[name].flags(fs)
		for _, args := range [][]string{{"help", name}, {name, "-h"}, {name, "-help"}, {name, "--help"}} {
			code, stdout, stderr := matrixgenCmd(t, args...)
			if code != 0 || stderr != "" {
				t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
				continue
			}
			if !strings.HasPrefix(stdout, "Usage: matrixgen "+name) {
				t.Errorf("%q: help does not start with its usage line:\n%s", args, stdout)
			}
			_, options, ok := strings.Cut(stdout, "\nOptions:\n")
			options, examples, ok2 := strings.Cut(options, "\nExamples:\n")
			if !ok || !ok2 {
				t.Errorf("%q: no Options or no Examples section:\n%s", args, stdout)
				continue
			}
			if !strings.Contains(options, "  -h, -help\n") {
				t.Errorf("%q: the options do not say -h", args)
			}
			fs.VisitAll(func(f *flag.Flag) {
				if f.Usage == "" || !strings.Contains(options, "  -"+f.Name+" ") && !strings.Contains(options, "  -"+f.Name+"\n") {
					t.Errorf("%q: option -%s is not explained:\n%s", args, f.Name, options)
				}
				if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "0s" && !strings.Contains(options, fmt.Sprintf("(default %q)", f.DefValue)) {
					t.Errorf("%q: option -%s does not show its default %q", args, f.Name, f.DefValue)
				}
			})
			lines := strings.Split(strings.Trim(examples, "\n"), "\n")
			for _, l := range lines {
				if !strings.HasPrefix(l, "  matrixgen ") {
					t.Errorf("%q: example %q is not a matrixgen command line", args, l)
				}
			}
		}
	}
}

// TestVersion: `matrixgen version`, -version and --version print the
// version every run records.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		code, stdout, stderr := matrixgenCmd(t, args...)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "matrixgen "+matrixgen.Version+" (go") && !strings.HasPrefix(stdout, "matrixgen "+matrixgen.Version+" (commit ") || strings.Count(stdout, "\n") != 1 {
			t.Errorf("%q: exit %d, %q %q", args, code, stdout, stderr)
		}
	}
}

// TestMistakes: a command line matrixgen cannot understand gets one line
// on stderr naming the mistake and where help is, nothing on stdout, and
// exit 2, never the whole help.
func TestMistakes(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"; the commands are build,`},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "run", "build"}, "one command at a time"},
		{[]string{"build", "-nope"}, "flag provided but not defined: -nope"},
		{[]string{"build", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"run", "-duration", "soon"}, `invalid value "soon" for flag -duration`},
		{[]string{"run", "-duration", "5"}, `invalid value "5" for flag -duration: want a duration with its unit, such as 30s or 2m`},
		{[]string{"run", "-set", "sweep.duraton=5s"}, `-set sweep.duraton=5s: unknown key "sweep.duraton"`},
		{[]string{"run", "-concurrency", "1,x"}, `"x" is not a whole number from 1 up`},
		{[]string{"run", "-concurrency", "0"}, `"0" is not a whole number from 1 up`},
		{[]string{"run", "-duration", "-5s"}, "-duration: want a positive window such as 30s, not -5s"},
		{[]string{"run", "-max-output", "-1"}, "-max-output: want a positive number of tokens"},
		{[]string{"run", "-duration", "0s"}, "-duration: want a positive window such as 30s, not 0s"},
		{[]string{"run", "-base-url", "127.0.0.1:8000"}, `-base-url: server.base_url: want an http:// or https:// URL, got "127.0.0.1:8000"`},
		{[]string{"run", "-kv-cache-tokens", "-5"}, "-kv-cache-tokens: sweep.kv_cache_tokens: must not be negative, got -5"},
		{[]string{"run", "-set", "sweep.duration=-3s"}, "-set: sweep.duration: must be positive, got -3s"},
		{[]string{"run", "-max-output", "0"}, "-max-output: want a positive number of tokens, not 0"},
		{[]string{"run", "-set", "sweep.duration=0s"}, `-set "sweep.duration=0s": sweep.duration must be positive; leave it out for the default`},
		{[]string{"run", "-repeat", "-2"}, "-repeat: want a count of measurements of every cell from 1 to 100, not -2"},
		{[]string{"run", "-repeat", "0"}, "-repeat: want a count of measurements of every cell from 1 to 100, not 0"},
		{[]string{"run", "-repeat", "101"}, "-repeat: want a count of measurements of every cell from 1 to 100, not 101"},
		{[]string{"run", "-contexts", "lots"}, `context "lots"`},
		{[]string{"run", "-o"}, "flag needs an argument: -o"},
		{[]string{"run", "-o", "runs/x y.json"}, "want <id>.json"},
		{[]string{"run", "-o", "runs/aux.json"}, "not a name Windows keeps for a device"},
		{[]string{"run", "-resume", "runs/x.json", "-o", "runs/y.json"}, "-o and -resume"},
		{[]string{"sim", "-trace", "many"}, `invalid value "many" for flag -trace`},
		{[]string{"import", "guidellm", "x.json"}, `unknown format "guidellm"`},
		{[]string{"import", "vllm-bench-serve", "x.json", "-idd", "x"}, "flag provided but not defined: -idd"},
		{[]string{"import", "vllm-bench-serve"}, "name a format and at least one file"},
		{[]string{"validate"}, "name the run files to check"},
		{[]string{"version", "now"}, "unexpected arguments"},
		// A likely meaning is named; bad values of build's and serve's
		// flags are mistakes too, named by their flag (they exited 1, as
		// a config key or a system call).
		{[]string{"buld"}, `unknown command "buld" (did you mean build?)`},
		{[]string{"build", "-out", "x"}, "-out; did you mean -o?"},
		{[]string{"run", "-duraton", "5s"}, "-duraton; did you mean -duration?"},
		{[]string{"build", "-base-url", "notaurl"}, `-base-url: want an http:// or https:// URL, got "notaurl"`},
		{[]string{"serve", "-addr", "nonsense"}, `-addr: want host:port`},
		{[]string{"serve", "-addr", ":99999"}, `-addr: want host:port with a port from 0 to 65535`},
		{[]string{"build", "-runs", "s3://"}, "name the bucket"},
	} {
		checkMistake(t, tt.args, tt.want)
	}
	// Many more, generated: unknown commands and flags of every command,
	// spelt with odd characters too.
	rng := rand.New(rand.NewPCG(23, 1))
	const alphabet = "abcdefghijklmnopqrstuvwxyz-_=.\n\x1b\"' ÿ"
	word := func() string {
		b := make([]rune, 1+rng.IntN(12))
		runes := []rune(alphabet)
		for i := range b {
			b[i] = runes[rng.IntN(len(runes))]
		}
		return "zz" + string(b)
	}
	for range 200 {
		checkMistake(t, []string{word()}, "unknown command")
		name := commandNames()[rng.IntN(len(commands))]
		checkMistake(t, []string{name, "-" + word()}, "flag provided but not defined")
	}
}

func checkMistake(t *testing.T, args []string, want string) {
	t.Helper()
	code, stdout, stderr := matrixgenCmd(t, args...)
	if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, " -h')\n") ||
		!strings.Contains(stderr, want) || strings.ContainsAny(stderr, "\x1b\r") {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q and a pointer to -h", args, code, stdout, stderr, want)
	}
}
