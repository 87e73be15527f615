package render

import (
	"fmt"
	"hash/fnv"
)

// A run page links the compare pages of it. The pairs are known only once
// every run is read, after its page is written, so the links are in one of
// comparedBuckets scripts (assets/compared/00.js … ff.js), the one the
// run's id hashes to. Only the buckets that hold a pair are written, and
// assets/compared/buckets.js lists them, for a page to load its bucket
// only if listed.

// comparedBuckets is how many scripts the links are spread over: at
// 100,000 runs each is some tens of kilobytes.
const comparedBuckets = 256

// comparedBucket is the bucket (0-based) of a run's id.
func comparedBucket(id string) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % comparedBuckets)
}

// comparedName is the file of the bucket.
func comparedName(bucket int) string {
	return fmt.Sprintf("assets/compared/%02x.js", bucket)
}

// comparedListName is the script listing the buckets written.
const comparedListName = "assets/compared/buckets.js"

// comparedFiles are the buckets of the pairs that hold one, each listing,
// for each run in it with a pair, the other run and the compare page's
// folder: matrixgenCompared(bucket, [[id, [[other, folder], …]], …]); and
// the list of those buckets: matrixgenComparedBuckets([bucket, …]).
func comparedFiles(pairs []Pair) []indexFile {
	type link struct{ other, page string }
	byRun := map[string][]link{}
	var order [comparedBuckets][]string
	add := func(id, other, page string) {
		if _, ok := byRun[id]; !ok {
			b := comparedBucket(id)
			order[b] = append(order[b], id)
		}
		byRun[id] = append(byRun[id], link{other, page})
	}
	for _, p := range pairs {
		page := compareID(p)
		add(p.A, p.B, page)
		add(p.B, p.A, page)
	}
	var files []indexFile
	written := []int{}
	for b := range comparedBuckets {
		ids := order[b]
		if len(ids) == 0 {
			continue
		}
		written = append(written, b)
		h := newPrint()
		writeValues(h, b)
		list := make([][2]any, len(ids))
		for i, id := range ids {
			writeStrings(h, id)
			links := make([][2]string, len(byRun[id]))
			for k, l := range byRun[id] {
				writeStrings(h, l.other, l.page)
				links[k] = [2]string{l.other, l.page}
			}
			list[i] = [2]any{id, links}
		}
		files = append(files, indexFile{rel: comparedName(b), print: h.Sum64(),
			make: func() ([]byte, error) { return scriptCall("matrixgenCompared", b, list) }})
	}
	data, err := scriptCall("matrixgenComparedBuckets", written)
	return append(files, madeFile(comparedListName, data, err))
}
