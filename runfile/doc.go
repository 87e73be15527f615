// Package runfile reads, checks and writes run files: a runs folder's files
// listed (Files), one read with its notes (Read, Load) within bounds and
// without following a link out of its folder, decoded strictly (Decode:
// unknown and repeated names, wrong types and trailing data refused, then
// the run's own Validate), every problem of a bad file placed at its
// file:line:col (Error, Locate, LineCol), a run encoded as the canonical
// file (Encode) and saved atomically (Save), and the format as a JSON
// Schema (Schema).
//
// The run model and its validation are the root package's (matrixgen.Run,
// Run.Validate, matrixgen.Problem); this package imports it, never the
// other way round.
package runfile
