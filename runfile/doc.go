// Package runfile reads, checks and writes run files: a runs folder listed
// (Files), a file and its notes read within bounds, never through a link
// out of the folder (Read, Load), decoded strictly, then validated by the
// root's Run.Validate (Decode), each problem placed at its file:line:col
// (Error, Locate, LineCol), a run encoded canonically (Encode) and saved
// atomically (Save), and the format as a JSON Schema (Schema).
package runfile
