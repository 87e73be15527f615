package runner

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/matrixgen/matrixgen"
)

// checkFigures holds a measured cell to what a run file may hold
// (Decode.Problems: what is physically possible, counts a server could
// give) and to having measured anything: a cell that fails is an Error
// with the reason, its figures dropped. Power alone past the bound costs
// the cell its power figures, not its speed.
func checkFigures(d *matrixgen.Decode, maxOutput, gpus int, duration float64) {
	if !d.Measured() {
		return
	}
	var speed, power []matrixgen.Problem
	for _, p := range d.Problems(maxOutput, gpus, duration) {
		if strings.HasPrefix(p.Field, "power.") {
			power = append(power, p)
		} else {
			speed = append(speed, p)
		}
	}
	if d.OutputTokens != nil && *d.OutputTokens == 0 {
		speed = append(speed, matrixgen.Problem{Field: "output_tokens",
			Msg: fmt.Sprintf("no token arrived in the %.3g s window: it measured nothing", *d.WindowSeconds)})
	}
	if len(power) > 0 {
		d.Power, d.PowerMissing = nil, "no reading: impossible power figures: "+problemList(power)
	}
	if len(speed) == 0 {
		return
	}
	*d = matrixgen.Decode{ContextTokens: d.ContextTokens, Concurrency: d.Concurrency, Attempts: d.Attempts,
		IdleWaitSeconds: d.IdleWaitSeconds, WindowStart: d.WindowStart,
		Status: matrixgen.StatusError, Reason: "impossible figures, not a measurement: " + problemList(speed)}
}

// serverAddress is the server's base URL as a run records it: its root,
// without user information, query, fragment, trailing slash or /v1.
func serverAddress(base string) string {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Host == "" {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return strings.TrimSuffix(strings.TrimRight(u.String(), "/"), "/v1")
}
