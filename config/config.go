// Package config reads matrixgen.toml, the one file that configures both
// `matrixgen run` and `matrixgen build`. It owns the TOML dependency.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/matrixgen/matrixgen/runner/sim"
)

// DefaultFile is where the commands look for their configuration.
const DefaultFile = "matrixgen.toml"

// Config is the whole file. Every section is optional.
type Config struct {
	Site Site `toml:"site"`
}

// Site configures the published site.
type Site struct {
	// Title heads the index and ends every page's title.
	Title string `toml:"title"`
	// Description is the index's lede and meta description.
	Description string `toml:"description"`
	// BaseURL is where the site is published; pages link relatively anyway.
	BaseURL string `toml:"base_url"`
}

// Load reads a config file. A missing file is not an error when optional is
// set (the default file may be absent); it gives the zero Config.
func Load(name string, optional bool) (Config, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		if optional && errors.Is(err, fs.ErrNotExist) {
			return Config{}, nil
		}
		return Config{}, err
	}
	return Parse(name, data)
}

// Parse decodes a config file's bytes. Syntax errors, wrong types and
// unknown keys are errors that name the file and the line.
func Parse(name string, data []byte) (Config, error) {
	var c Config
	if err := decodeStrict(name, data, &c); err != nil {
		return Config{}, err
	}
	if err := c.validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// LoadSimProfile reads a `matrixgen sim` profile over the defaults, with
// the same strictness as the config file.
func LoadSimProfile(name string) (sim.Profile, error) {
	p := sim.DefaultProfile()
	data, err := os.ReadFile(name)
	if err != nil {
		return p, err
	}
	if err := decodeStrict(name, data, &p); err != nil {
		return p, err
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// decodeStrict decodes TOML into v; syntax errors, wrong types and unknown
// keys are errors naming the file and the line.
func decodeStrict(name string, data []byte, v any) error {
	md, err := toml.Decode(string(data), v)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			where := ""
			if perr.LastKey != "" {
				where = fmt.Sprintf(" key %q:", perr.LastKey)
			}
			return fmt.Errorf("%s:%d:%s %s", name, perr.Position.Line, where, perr.Message)
		}
		if m := typeErrLine.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("%s:%s: key %q: %s", name, m[1], m[2], m[3])
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	if unknown := md.Undecoded(); len(unknown) > 0 {
		lines := keyLines(data)
		var errs []error
		reported := map[string]bool{}
		for _, k := range unknown {
			if len(k) > 1 && reported[k[:len(k)-1].String()] {
				continue // inside an unknown table already reported
			}
			reported[k.String()] = true
			errs = append(errs, fmt.Errorf("%s:%d: unknown key %q", name, lines[k.String()], k.String()))
		}
		return errors.Join(errs...)
	}
	return nil
}

func (c Config) validate() error {
	if u := c.Site.BaseURL; u != "" {
		parsed, err := url.Parse(u)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return fmt.Errorf("site.base_url: want an http:// or https:// URL, got %q", u)
		}
	}
	return nil
}

// typeErrLine reads BurntSushi/toml's type errors, which come as text:
// `toml: line 3 (last key "site.title"): incompatible types: …`.
var typeErrLine = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

var (
	tableLine = regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?`)
	keyLine   = regexp.MustCompile(`^\s*([A-Za-z0-9_."'-]+?)\s*=`)
)

// keyLines maps each dotted key to the line that defines it. BurntSushi/toml
// keeps key positions private, so this reads the lines itself; it covers
// tables, arrays of tables and (dotted) bare or quoted keys, which is all a
// config file needs.
func keyLines(data []byte) map[string]int {
	out := map[string]int{}
	table := ""
	for i, line := range strings.Split(string(data), "\n") {
		if m := tableLine.FindStringSubmatch(line); m != nil {
			table = unquoteKey(m[1])
			if _, ok := out[table]; !ok {
				out[table] = i + 1
			}
			continue
		}
		if m := keyLine.FindStringSubmatch(line); m != nil {
			key := unquoteKey(m[1])
			if table != "" {
				key = table + "." + key
			}
			if _, ok := out[key]; !ok {
				out[key] = i + 1
			}
		}
	}
	return out
}

func unquoteKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// Validated checks a config changed after loading, by flags.
func Validated(c Config) (Config, error) {
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}
