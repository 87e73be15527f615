// Package browser drives a headless Chromium over the DevTools protocol,
// for tests of the built pages.
package browser

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/websocket"

	"github.com/matrixgen/matrixgen/internal/procgroup"
)

// Browser is a headless Chromium and one page in it.
type Browser struct {
	cmd     *exec.Cmd
	ws      *websocket.Conn
	session string

	mu       sync.Mutex
	nextID   int
	waiting  map[int]chan reply
	events   []Event
	loadDone chan struct{}
}

// Event is a DevTools event the page raised.
type Event struct {
	Method string
	Params json.RawMessage
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// startWithin bounds Chromium's start: its first on a fresh machine builds
// the font cache, over 30 s on a busy two-core CI runner.
const startWithin = 3 * time.Minute

// Start launches Chromium with a fresh profile and opens a blank page. One
// that ends before it listens (its zygote once could not fork on a loaded
// CI runner) is started again, twice at most, each with a profile of its own.
func Start(path, profileDir string) (*Browser, error) {
	var errs []error
	for try := 1; try <= 3; try++ {
		profile := filepath.Join(profileDir, fmt.Sprintf("try-%d", try))
		b, err := startOnce(path, profile)
		if !errors.Is(err, errEndedEarly) {
			return b, err
		}
		errs = append(errs, err)
		time.Sleep(time.Duration(try) * time.Second)
	}
	return nil, errors.Join(errs...)
}

// errEndedEarly is a Chromium that ended before it listened for DevTools.
var errEndedEarly = errors.New("chromium ended before it listened for DevTools")

// startOnce is one try of Start.
func startOnce(path, profileDir string) (*Browser, error) {
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
		"--user-data-dir="+profileDir, "--remote-debugging-port=0", "--remote-allow-origins=*", "--window-size=1280,2000", "about:blank")
	procgroup.Own(cmd) // Close ends its helpers too
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	wsURL, said := make(chan string, 1), make(chan []string, 1)
	go func() {
		// The last lines Chromium printed go into the error when it
		// never listens, so a CI log says why (a missing library, a
		// sandbox refusal) rather than only that it timed out.
		var tail []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), "DevTools listening on "); ok {
				wsURL <- strings.TrimSpace(after)
				continue
			}
			if tail = append(tail, sc.Text()); len(tail) > 8 {
				tail = tail[1:]
			}
		}
		said <- tail
	}()
	b := &Browser{cmd: cmd, waiting: map[int]chan reply{}}
	select {
	case u := <-wsURL:
		if b.ws, err = websocket.Dial(u, "", "http://localhost/"); err == nil {
			go b.read()
			err = b.openPage()
		}
	case tail := <-said:
		err = fmt.Errorf("%w; it said:\n%s", errEndedEarly, strings.Join(tail, "\n"))
	case <-time.After(startWithin):
		err = fmt.Errorf("chromium did not start its DevTools endpoint within %s", startWithin)
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// openPage opens the page the browser drives and the events its methods read.
func (b *Browser) openPage() error {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return err
	}
	b.session = attached.SessionID
	for _, domain := range []string{"Page.enable", "Runtime.enable", "Network.enable", "Log.enable"} {
		if err := b.call(b.session, domain, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

func (b *Browser) read() {
	for {
		var msg struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			reply
		}
		if err := websocket.JSON.Receive(b.ws, &msg); err != nil {
			b.mu.Lock()
			for _, ch := range b.waiting {
				close(ch)
			}
			b.waiting = map[int]chan reply{}
			b.mu.Unlock()
			return
		}
		b.mu.Lock()
		if msg.ID != 0 {
			if ch, ok := b.waiting[msg.ID]; ok {
				ch <- msg.reply
				delete(b.waiting, msg.ID)
			}
		} else if msg.Method != "" {
			b.events = append(b.events, Event{msg.Method, msg.Params})
			if msg.Method == "Page.loadEventFired" && b.loadDone != nil {
				close(b.loadDone)
				b.loadDone = nil
			}
		}
		b.mu.Unlock()
	}
}

// call sends a command and decodes its result into out (if not nil).
func (b *Browser) call(session, method string, params any, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan reply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := struct {
		ID        int    `json:"id"`
		Method    string `json:"method"`
		Params    any    `json:"params,omitempty"`
		SessionID string `json:"sessionId,omitempty"`
	}{id, method, params, session}
	if err := websocket.JSON.Send(b.ws, msg); err != nil {
		return err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the browser went away", method)
		}
		if r.Error != nil {
			return fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s: no answer in 60 s", method)
	}
}

// Navigate opens url and waits for its load event, then for its scripts.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	done := make(chan struct{})
	b.mu.Lock()
	b.loadDone = done
	b.events = nil
	b.mu.Unlock()
	if err := b.call(b.session, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		return err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(60 * time.Second):
		return errors.New("the page did not finish loading in 60 s")
	}
	time.Sleep(500 * time.Millisecond)
	return nil
}

// Eval runs a JavaScript expression on the page and decodes its value.
func (b *Browser) Eval(expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res); err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("%s: %s", expr, res.ExceptionDetails.Text)
	}
	return json.Unmarshal(res.Result.Value, out)
}

// EachScreen calls f at desktop (1400 × 900) and phone (390 × 844)
// sizes, in light and in dark: the screens every page is tested at. A phone
// is emulated: its viewport meta tag honoured, scrollbars overlaid.
func (b *Browser) EachScreen(f func(screen, scheme string, phone bool)) error {
	for _, screen := range []struct {
		name          string
		width, height int
		scale         float64
		phone         bool
	}{{"desktop", 1400, 900, 1, false}, {"phone", 390, 844, 2, true}} {
		for _, scheme := range []string{"light", "dark"} {
			err := b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": screen.width,
				"height": screen.height, "deviceScaleFactor": screen.scale, "mobile": screen.phone}, nil)
			if err == nil {
				err = b.call(b.session, "Emulation.setEmulatedMedia", map[string]any{
					"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}}, nil)
			}
			if err != nil {
				return err
			}
			f(screen.name, scheme, screen.phone)
		}
	}
	return nil
}

// Screenshot saves the whole page as a PNG.
func (b *Browser) Screenshot(file string) error {
	return b.screenshot(file, true)
}

// ScreenshotViewport saves what the window shows of the page as a PNG: of
// a page tens of thousands of pixels long, the part a test scrolled to.
func (b *Browser) ScreenshotViewport(file string) error {
	return b.screenshot(file, false)
}

func (b *Browser) screenshot(file string, whole bool) error {
	var shot struct {
		Data string `json:"data"`
	}
	if err := b.call(b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": whole}, &shot); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return err
	}
	return os.WriteFile(file, png, 0o644)
}

// Requests lists every URL the page asked for since it was opened.
func (b *Browser) Requests() []string {
	var out []string
	for _, e := range b.Events("Network.requestWillBeSent") {
		var p struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			out = append(out, p.Request.URL)
		}
	}
	return out
}

// Errors lists console errors, uncaught exceptions and error log entries.
func (b *Browser) Errors() []string {
	// Each method that may report an error, and what its event holds when
	// it does ("": every one of them).
	errorMark := map[string]string{"Runtime.exceptionThrown": "", "Log.entryAdded": `"level":"error"`, "Runtime.consoleAPICalled": `"type":"error"`}
	var out []string
	for _, e := range b.Events("") {
		if mark, ok := errorMark[e.Method]; ok && strings.Contains(string(e.Params), mark) {
			out = append(out, e.Method+": "+string(e.Params))
		}
	}
	return out
}

// Events returns the page's events of a method ("" for all).
func (b *Browser) Events(method string) []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Event
	for _, e := range b.events {
		if method == "" || e.Method == method {
			out = append(out, e)
		}
	}
	return out
}

// Close ends the browser.
func (b *Browser) Close() {
	if b.ws != nil {
		b.ws.Close()
	}
	if b.cmd.Process != nil {
		procgroup.Kill(b.cmd)
		b.cmd.Wait()
	}
}
