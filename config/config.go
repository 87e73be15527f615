// Package config reads matrixgen.toml (for run and build) and sim profiles
// into types of its own; it imports neither the runner nor the sim: the
// command wires its values into theirs.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/matrixgen/matrixgen/internal/suggest"
)

// DefaultFile is where the commands look for their configuration.
const DefaultFile = "matrixgen.toml"

// Config is the whole file. Every section is optional.
type Config struct {
	Site     Site     `toml:"site"`
	Server   Server   `toml:"server"`
	Sweep    Sweep    `toml:"sweep"`
	Describe Describe `toml:"describe"`

	lines map[string]int // where each key was defined, for later errors
	file  string
}

// Where names the place of a key in the file, "matrixgen.toml:12", for an
// error found after loading (a context the server cannot hold, say).
func (c Config) Where(key string) string { return inFile(c.file).at(c.lines[key], 0) }

// Site configures the published site.
type Site struct {
	// Title heads the index and ends every page's title.
	Title string `toml:"title"`
	// Description is the index's lede and meta description.
	Description string `toml:"description"`
	// BaseURL is where the site is published; pages link relatively anyway.
	BaseURL string `toml:"base_url"`
	// Compare lists pairs of run ids to compare, beside the pairs of runs
	// that share a model and a GPU, which always get a page.
	Compare []ComparePair `toml:"compare"`
	// PublishServerAddress puts each run's server address (probe.base_url)
	// in the site's copies of the run files; left out by default, since
	// it is often an address inside a lab's network.
	PublishServerAddress bool `toml:"publish_server_address"`
}

// ComparePair is one [[site.compare]]: run A, the baseline, and run B.
type ComparePair struct {
	A string `toml:"a"`
	B string `toml:"b"`
}

// Load reads a config file. A missing file is not an error when optional is
// set (the default file may be absent); it gives the zero Config.
func Load(name string, optional bool) (Config, error) {
	data, err := readBounded(name)
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
	lines, err := decodeStrict(inFile(name), data, &c)
	if err != nil {
		return Config{}, err
	}
	c.lines, c.file = lines, name
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// LoadFile reads another TOML file (a sim profile) into v, which holds the
// defaults and its own tags, as strictly as the config file; each problem
// of check, v's own validation, is placed at the line of the key it names.
func LoadFile(name string, v any, check func() error) error {
	data, err := readBounded(name)
	if err != nil {
		return err
	}
	lines, err := decodeStrict(inFile(name), data, v)
	if err != nil {
		return err
	}
	if err := check(); err != nil {
		return placeProfileErrors(name, lines, err)
	}
	return nil
}

// placeProfileErrors puts each of a profile's problems at the line of the
// key it names ("decode: base_ms …" at decode.base_ms), or of its table, or
// else (a default value's) names the file only.
func placeProfileErrors(name string, lines map[string]int, err error) error {
	problems := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		problems = joined.Unwrap()
	}
	var placed []error
	for _, p := range problems {
		msg := p.Error()
		key, rest, _ := strings.Cut(msg, ":")
		line := lines[key]
		if word := strings.Fields(rest); len(word) > 0 {
			line = cmp.Or(lines[key+"."+strings.Trim(word[0], ",:")], line)
		}
		placed = append(placed, fmt.Errorf("%s: %s", inFile(name).at(line, 0), msg))
	}
	return errors.Join(placed...)
}

// maxUnknownKeys is how many unknown keys an error lists: a file of
// nothing else says so in a screenful, not in a hundred thousand lines.
const maxUnknownKeys = 20

// source is what decodeStrict reads: a file, whose problems are placed at
// their line, or a -set override, whose made-up lines would place nothing.
type source struct {
	name  string
	lines bool
}

func inFile(name string) source { return source{name: name, lines: true} }

// at places a problem: file:line:col, file:line (col 0), or the override.
func (s source) at(line, col int) string {
	switch {
	case !s.lines || line == 0:
		return s.name
	case col == 0:
		return fmt.Sprintf("%s:%d", s.name, line)
	}
	return fmt.Sprintf("%s:%d:%d", s.name, line, col)
}

// decodeStrict decodes TOML into v, and gives each key's line (keyLines);
// syntax errors, wrong types and unknown keys are errors naming the file and the line.
func decodeStrict(src source, data []byte, v any) (map[string]int, error) {
	if err := checkBounds(src.name, data); err != nil {
		return nil, err
	}
	lines := keyLines(data)
	md, err := toml.Decode(string(data), v)
	if err == nil {
		return lines, errors.Join(notTables(src, lines, md, reflect.TypeOf(v)),
			unknownKeys(src, lines, md.Undecoded(), reflect.ValueOf(v)))
	}
	var perr toml.ParseError
	if errors.As(err, &perr) {
		where := ""
		if perr.LastKey != "" {
			where = fmt.Sprintf(" key %q:", perr.LastKey)
		}
		return nil, fmt.Errorf("%s:%s %s", src.at(perr.Position.Line, perr.Position.Col), where, perr.Message)
	}
	return nil, misfit(src, data, lines, v, err)
}

// unknownKeys is an error for each unknown key (at most maxUnknownKeys,
// none inside an unknown table named), with the known key likely meant.
func unknownKeys(src source, lines map[string]int, keys []toml.Key, v reflect.Value) error {
	t := v.Type()
	var errs []error
	reported := map[string]bool{}
keys:
	for _, k := range keys {
		if inFreeForm(v, k) {
			continue // decoded into a map: BurntSushi/toml lists a nested table's keys all the same
		}
		for n := range len(k) {
			if reported[k[:n+1].String()] {
				continue keys // reported, or inside an unknown table that is: the first unknown name is the mistake
			}
		}
		reported[k.String()] = true
		if len(errs) == maxUnknownKeys {
			errs = append(errs, fmt.Errorf("%s: and more unknown keys", src.name))
			break
		}
		hint := suggest.DidYouMean(k[len(k)-1], keysAt(t, k[:len(k)-1]))
		errs = append(errs, fmt.Errorf("%s: unknown key %q%s", src.at(lines[k.String()], 0), k.String(), hint))
	}
	return errors.Join(errs...)
}

// inFreeForm reports whether key lies inside a free-form value of v (an
// interface, such as [server] extra's values) and was decoded into it:
// BurntSushi/toml lists the keys of a table nested in one (extra = {a = {b
// = 1}}) as undecoded, and those of one it could not put there
// ([[server.extra]]) too, which are unknown.
func inFreeForm(v reflect.Value, key toml.Key) bool {
	free := false
	for _, part := range key {
		v, free = through(v, free)
		switch {
		case !v.IsValid():
			return false
		case v.Kind() == reflect.Struct:
			f, ok := fieldByKey(v.Type(), part)
			if !ok {
				return false
			}
			v = v.FieldByIndex(f.Index)
		case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
			v = v.MapIndex(reflect.ValueOf(part).Convert(v.Type().Key()))
		case v.Kind() == reflect.Slice:
			return free // a table in a list, kept whole inside the free-form value
		default:
			return false
		}
	}
	v, free = through(v, free)
	return free && v.IsValid()
}

// through is v without the pointers and interfaces around it, and whether
// the walk is inside a free-form value: it was, or v is an interface.
func through(v reflect.Value, free bool) (reflect.Value, bool) {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		free = free || v.Kind() == reflect.Interface
		if v.IsNil() {
			return reflect.Value{}, free
		}
		v = v.Elem()
	}
	return v, free
}

// element is t without the pointers, slices and arrays around what a TOML
// table or value decodes into.
func element(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	return t
}

// notTables is an error for each key whose setting is a free-form table
// ([server] extra) but whose value is not a table (arrays of tables are
// unknownKeys'): BurntSushi/toml leaves such a map empty without an error.
func notTables(src source, lines map[string]int, md toml.MetaData, t reflect.Type) error {
	var errs []error
	for _, k := range md.Keys() {
		kind := md.Type(k...)
		setting, ok := typeAt(t, k)
		if kind == "Hash" || kind == "ArrayHash" || kind == "" || !ok || setting.Kind() != reflect.Map {
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s: want a table, got %s", src.at(lines[k.String()], 0), k, tomlTypeName(kind)))
	}
	return errors.Join(errs...)
}

// typeAt is the type of the setting at path in a value of type t, through
// struct fields (and elements), without its pointers; false where the path
// leaves the structs.
func typeAt(t reflect.Type, path []string) (reflect.Type, bool) {
	for _, part := range path {
		t = element(t)
		if t.Kind() != reflect.Struct {
			return nil, false
		}
		f, ok := fieldByKey(t, part)
		if !ok {
			return nil, false
		}
		t = f.Type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, true
}

// tomlTypeName is a TOML type as BurntSushi/toml names it (Integer,
// Array, DatetimeLocal), as a message says it.
func tomlTypeName(kind string) string {
	names := map[string]string{"Integer": "an integer", "Array": "an array", "Bool": "a boolean"}
	if name, ok := names[kind]; ok {
		return name
	}
	if strings.Contains(kind, "Date") || strings.Contains(kind, "Time") {
		return "a date or time"
	}
	return "a " + strings.ToLower(kind)
}

// fieldByKey is the field of struct t whose toml name is key: the same
// name, else the same but for case, as BurntSushi/toml matches them.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	folded, found := reflect.StructField{}, false
	for f := range t.Fields() {
		name, ok := tomlName(f)
		switch {
		case ok && name == key:
			return f, true
		case ok && !found && strings.EqualFold(name, key):
			folded, found = f, true
		}
	}
	return folded, found
}

// keysAt lists the TOML keys of the struct at path in a value of type t,
// for a misspelt key's suggestion.
func keysAt(t reflect.Type, path []string) []string {
	t, ok := typeAt(t, path)
	if !ok || element(t).Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for f := range element(t).Fields() {
		if name, ok := tomlName(f); ok {
			keys = append(keys, name)
		}
	}
	return keys
}

// tomlName is a struct field's TOML key, and whether it has one.
func tomlName(f reflect.StructField) (string, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "" {
		name = f.Name
	}
	return name, name != "-" && f.IsExported()
}

// maxTitle and maxDescription bound the site's title and description in
// characters: on every page, a megabyte title made 60 runs' site 246 MB.
const (
	maxTitle       = 200
	maxDescription = 2000
)

// validate checks what only the file can get wrong, each error at its
// key's line: the [site] section, and a count or duration written as zero
// where leaving the key out means the default. The ranges of the other
// sections are the runner's to check (runner.Settings.Check).
func (c Config) validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s: %s", c.Where(key), key, fmt.Sprintf(format, args...)))
	}
	if err := CheckBaseURL(c.Site.BaseURL); err != nil {
		bad("site.base_url", "%v", err)
	}
	for _, f := range []struct {
		key, value string
		most       int
	}{{"site.title", c.Site.Title, maxTitle}, {"site.description", c.Site.Description, maxDescription}} {
		if n := utf8.RuneCountInString(f.value); n > f.most {
			bad(f.key, "%d characters; at most %d (it is on every page)", n, f.most)
		}
	}
	for _, p := range c.Site.Compare {
		if p.A == "" || p.B == "" || p.A == p.B {
			bad("site.compare", "each pair needs two different run ids, a and b")
		}
	}
	for key, zero := range c.zeroed() {
		if zero && c.lines[key] > 0 {
			bad(key, "must be positive, got 0; leave the key out for the default")
		}
	}
	return errors.Join(errs...)
}

// zeroed says of each count or duration whose zero means its default
// whether it is zero: one written as zero is a mistake.
func (c Config) zeroed() map[string]bool {
	s := c.Sweep
	return map[string]bool{
		"sweep.duration": s.Duration.Duration == 0, "sweep.warmup_timeout": s.WarmupTimeout.Duration == 0,
		"sweep.stall_timeout": s.StallTimeout.Duration == 0, "sweep.server_wait": s.ServerWait.Duration == 0,
		"sweep.idle_timeout": s.IdleTimeout.Duration == 0, "sweep.max_output": s.MaxOutput == 0,
		"sweep.repeats": s.Repeats == 0, "sweep.prefill_repeats": s.PrefillRepeats == 0,
	}
}

// misfit places a value of the wrong type, which BurntSushi/toml reports
// without a position, at the first key whose value alone does not decode.
func misfit(src source, data []byte, lines map[string]int, v any, err error) error {
	var doc map[string]any
	md, parseErr := toml.Decode(string(data), &doc)
	if parseErr != nil {
		return fmt.Errorf("%s: %w", src.name, err)
	}
keys:
	for _, k := range md.Keys() {
		typ := md.Type(k...)
		if typ == "Hash" {
			continue // a table: its keys are tried one by one
		}
		value := any(doc)
		for _, part := range k {
			table, ok := value.(map[string]any)
			if !ok {
				continue keys // inside an array of tables, which was tried whole
			}
			value = table[part]
		}
		for i := len(k) - 1; i >= 0; i-- {
			value = map[string]any{k[i]: value} // the key alone, in its tables
		}
		var text strings.Builder
		if toml.NewEncoder(&text).Encode(value) != nil {
			continue
		}
		if _, e := toml.Decode(text.String(), reflect.New(reflect.TypeOf(v).Elem()).Interface()); e != nil {
			what := "a TOML " + strings.ToLower(typ)
			if typ == "ArrayHash" {
				what = "an array of tables"
			}
			return fmt.Errorf("%s: key %q: %s does not fit this setting", src.at(lines[k.String()], 0), k.String(), what)
		}
	}
	return fmt.Errorf("%s: %w", src.name, err)
}

var (
	tableLine = regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?`)
	keyLine   = regexp.MustCompile(`^\s*([A-Za-z0-9_."'-]+?)\s*=`)
)

// keyLines maps each dotted key to the line that defines it, positions
// BurntSushi/toml keeps private.
func keyLines(data []byte) map[string]int {
	out := map[string]int{}
	table := ""
	for i, line := range strings.Split(string(data), "\n") {
		var key string
		if m := tableLine.FindStringSubmatch(line); m != nil {
			table = unquoteKey(m[1])
			key = table
		} else if m := keyLine.FindStringSubmatch(line); m != nil {
			key = unquoteKey(m[1])
			if table != "" {
				key = table + "." + key
			}
		} else {
			continue
		}
		if _, ok := out[key]; !ok {
			out[key] = i + 1
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

// CheckBaseURL checks a site's base URL, from the file or a flag: empty
// (none), or an http:// or https:// URL with a host.
func CheckBaseURL(s string) error {
	if u, err := url.Parse(s); s != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return fmt.Errorf("want an http:// or https:// URL, got %q", s)
	}
	return nil
}

// Set applies command-line overrides section.key=value (TOML, a bare word
// a string), each checked as if it were in the file.
func (c *Config) Set(overrides []string) error {
	var errs []error
	for _, o := range overrides {
		key, value, ok := strings.Cut(o, "=")
		section, name, dotted := strings.Cut(strings.TrimSpace(key), ".")
		if !ok || !dotted || section == "" || name == "" {
			errs = append(errs, fmt.Errorf("-set %q: want section.key=value, e.g. sweep.cache_mode=distinct", o))
			continue
		}
		doc := fmt.Sprintf("[%s]\n%s = %s\n", section, name, strings.TrimSpace(value))
		if _, err := toml.Decode(doc, &map[string]any{}); err != nil {
			doc = fmt.Sprintf("[%s]\n%s = %q\n", section, name, strings.TrimSpace(value))
		}
		if _, err := decodeStrict(source{name: "-set " + o}, []byte(doc), c); err != nil {
			errs = append(errs, err)
		} else if c.zeroed()[section+"."+name] {
			errs = append(errs, fmt.Errorf("-set %q: %s.%s must be positive; leave it out for the default", o, section, name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if c.file == "" {
		c.file = "flags"
	}
	return c.validate()
}
