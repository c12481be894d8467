package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

// eventsFlags are the flags of gpuletd events.
type eventsFlags struct {
	url      string
	asJSON   bool
	lines    int
	tail     int       // with --since, print only the last tail of them; 0: all
	since    int64     // list every event after this ID; -1: the newest -n
	after    time.Time // list the events from this moment on; zero: none
	follow   bool
	kinds    []string
	severity string
	model    string
}

func newEventsCmd(g *globalFlags) *cobra.Command {
	var (
		f         eventsFlags
		sinceFlag string
	)
	cmd := &cobra.Command{
		Use:   "events [[--model] MODEL]",
		Short: "Show a running daemon's events: plans, executor restarts, profile jobs, warnings (-f: as they happen)",
		Long: `Ask a running gpuletd for its history (GET /api/v1/events): the plans it
applied, its executors' starts, exits and restarts, the models it loaded,
profiled or could not serve, reloads, a database it could not write.

It prints the newest -n events, oldest first, as journalctl -n does, or with
--since every event after an ID (412) or from a moment on: a time back from
now (30m, 2h, 3d), today, yesterday, a time of day or a date and time in
this machine's zone (10:00, 2026-11-28 10:00), or RFC 3339 (with -n, the
last of them). With -f it goes on printing events as they happen (GET
/api/v1/events/stream); when the daemon stops answering (a restart) it waits
for it and resumes after the last event it printed. With no daemon answering
at the configured address, it reads state_dir's database instead.

--kind, --severity and --model pick the events before -n counts them:
"gpuletd events --severity warning -n 5" is the five newest warnings and
errors.`,
		Example: `  gpuletd events                          # the 20 newest
  gpuletd events -f --severity warning    # warnings and errors as they happen
  gpuletd events --model resnet50 -n 50   # what happened to one model
  gpuletd events --kind executor_restart  # the executors that exited`,
		Args:              argsForFlag("model", 1),
		ValidArgsFunction: g.completeModelArg,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.since = -1 // the newest -n
			if cmd.Flags().Changed("since") {
				var err error
				if f.since, f.after, err = parseSince(sinceFlag, time.Now()); err != nil {
					return &exitError{code: 2, msg: "gpuletd: " + err.Error()}
				}
			}
			if f.lines < 0 || f.lines > daemon.MaxEventsListed {
				return &exitError{code: 2, msg: fmt.Sprintf("gpuletd: -n %d: give 0 to %d", f.lines, daemon.MaxEventsListed)}
			}
			if f.since >= 0 || !f.after.IsZero() {
				if cmd.Flags().Changed("lines") {
					f.tail = max(f.lines, 1) // the last -n of them, as journalctl --since -n
				}
			}
			filter, err := f.filter()
			if err != nil {
				return &exitError{code: 2, msg: "gpuletd: " + err.Error()}
			}
			d, err := g.daemonOf(cmd, f.url)
			if err != nil {
				return err
			}
			out := eventPrinter{w: cmd.OutOrStdout(), asJSON: f.asJSON, loc: time.Local, filter: filter,
				color: isTerminal(cmd.OutOrStdout()) && os.Getenv("NO_COLOR") == ""}
			last, err := listEvents(cmd.Context(), daemonEvents{d}, &f, out)
			if err != nil && f.url == "" && errors.Is(err, loadgen.ErrUnreachable) {
				// None answers where the configuration says: what its
				// database holds, as of the daemon's last write.
				last, err = g.eventsFromStateDir(cmd.Context(), &f, out, cmd.ErrOrStderr(), d.fail(err))
			}
			if err != nil {
				return d.fail(err)
			}
			if !f.follow {
				return nil
			}
			return followEvents(cmd.Context(), d, f.query(), last, out, cmd.ErrOrStderr(), time.Second)
		},
	}
	fl := cmd.Flags()
	addDaemonFlags(cmd, &f.url, &f.asJSON)
	fl.Lookup("json").Usage = "print each event as one line of JSON"
	fl.IntVarP(&f.lines, "lines", "n", 20, "how many of the newest events to show (with --since: of those since then)")
	fl.StringVar(&sinceFlag, "since", "", "show every event after an ID (0: the whole history), or from a moment on (1h, today, 10:00, 2026-11-28 10:00)")
	fl.BoolVarP(&f.follow, "follow", "f", false, "go on printing events as they happen, until interrupted")
	fl.StringSliceVar(&f.kinds, "kind", nil, "only events of these kinds (plan, reorganize, executor_restart, profile_job, model_load, …)")
	fl.StringVar(&f.severity, "severity", "", "only events at least this severe: debug, info, warning or error")
	fl.StringVar(&f.model, "model", "", "only the events recorded for this model")
	_ = cmd.RegisterFlagCompletionFunc("model", g.completeModelFlag)
	_ = cmd.RegisterFlagCompletionFunc("kind", completeEventKinds)
	_ = cmd.RegisterFlagCompletionFunc("severity", completeSeverities)
	return cmd
}

// filter is the flags' filter, which the daemon applies and the printer
// applies again (a daemon from before the filter lists every event).
func (f *eventsFlags) filter() (store.EventFilter, error) {
	out := store.EventFilter{Kinds: f.kinds, Model: f.model, After: f.after}
	if f.severity != "" {
		sev, err := store.ParseSeverity(f.severity)
		if err != nil {
			return out, fmt.Errorf("--severity: %w", err)
		}
		out.MinSeverity = sev
	}
	return out, nil
}

// query is the filter as the events API reads it.
func (f *eventsFlags) query() url.Values {
	q := url.Values{}
	if len(f.kinds) > 0 {
		q.Set("kind", strings.Join(f.kinds, ","))
	}
	if f.severity != "" {
		q.Set("severity", f.severity)
	}
	if f.model != "" {
		q.Set("model", f.model)
	}
	if !f.after.IsZero() {
		q.Set("after", f.after.Format(time.RFC3339Nano))
	}
	return q
}

// listEvents prints the events -n or --since asks for and returns the ID
// of the newest saved event the daemon has, for a follow to go on from.
func listEvents(ctx context.Context, src eventSource, f *eventsFlags, out eventPrinter) (int64, error) {
	q := f.query()
	if f.since < 0 && f.after.IsZero() {
		// The newest -n; -n 0 still asks for one, to learn where the
		// history ends.
		q.Set("limit", strconv.Itoa(max(f.lines, 1)))
		evs, err := src.list(ctx, q)
		if err != nil {
			return 0, err
		}
		last := newestID(evs, 0)
		if last == 0 && len(evs) == max(f.lines, 1) {
			// All of them kept unsaved (the database cannot be written):
			// the newest saved one is further back.
			q.Set("limit", strconv.Itoa(daemon.MaxEventsListed))
			back, err := src.list(ctx, q)
			if err != nil {
				return 0, err
			}
			last = newestID(back, 0)
		}
		if f.lines == 0 {
			return last, nil
		}
		return last, out.print(evs)
	}
	// Every event after --since, a page at a time; the unsaved ones (no
	// ID) come after the saved at the end of each page and are printed
	// with the last. With a tail, the pages are kept and only their last
	// events printed.
	since := max(f.since, 0)
	var kept []daemon.EventDoc
	keep := func(evs []daemon.EventDoc) error {
		if f.tail == 0 {
			return out.print(evs)
		}
		kept = append(kept, evs...)
		kept = kept[max(len(kept)-f.tail, 0):]
		return nil
	}
	q.Set("limit", strconv.Itoa(daemon.MaxEventsListed))
	for {
		q.Set("since", strconv.FormatInt(since, 10))
		evs, err := src.list(ctx, q)
		if err != nil {
			return 0, err
		}
		next := newestID(evs, since)
		if next == since || len(evs) < daemon.MaxEventsListed {
			if err := keep(evs); err != nil {
				return 0, err
			}
			return next, out.print(kept)
		}
		saved := slices.DeleteFunc(evs, func(e daemon.EventDoc) bool { return e.Unsaved })
		if err := keep(saved); err != nil {
			return 0, err
		}
		since = next
	}
}

// eventSource lists events as GET /api/v1/events does for the query q.
type eventSource interface {
	list(ctx context.Context, q url.Values) ([]daemon.EventDoc, error)
}

// daemonEvents lists a running daemon's events; its errors are loadgen's
// (d.fail says them).
type daemonEvents struct{ d *daemonAPI }

func (s daemonEvents) list(ctx context.Context, q url.Values) ([]daemon.EventDoc, error) {
	var evs []daemon.EventDoc
	return evs, adminFetch(ctx, s.d, "/api/v1/events?"+q.Encode(), &evs)
}

// storeEvents lists the events of a database no daemon serves.
type storeEvents struct{ st *store.Store }

func (s storeEvents) list(ctx context.Context, q url.Values) ([]daemon.EventDoc, error) {
	return daemon.ListEvents(ctx, s.st, q)
}

// eventsFromStateDir lists the events of the configured state_dir's
// database when no daemon answered (said says so), after a line on notes
// that says where they come from; see withStateDir.
func (g *globalFlags) eventsFromStateDir(ctx context.Context, f *eventsFlags, out eventPrinter, notes io.Writer, said error) (int64, error) {
	var last int64
	noted := false
	_, err := withStateDir(g, func(path string, alone bool) error {
		return store.ReadFile(ctx, path, alone, func(st *store.Store) error {
			fmt.Fprintf(notes, "%v; the events below are read from its database, %s\n", said, path)
			noted = true
			var err error
			last, err = listEvents(ctx, storeEvents{st}, f, out)
			return err
		})
	})
	switch {
	case err == nil || noted:
		return last, err
	case errors.Is(err, os.ErrNotExist):
		return 0, said // nothing served from there yet
	}
	return 0, &exitError{code: 1, msg: fmt.Sprintf("%v, and its database cannot be read: %v%s", said, err, ownerHint(err))}
}

// newestID is the largest ID among evs, at least since.
func newestID(evs []daemon.EventDoc, since int64) int64 {
	for _, e := range evs {
		since = max(since, e.ID)
	}
	return since
}

// followEvents prints the daemon's events after the one with ID last as
// they happen, until ctx ends (nil then). A daemon that stops answering is
// said once on notes and asked again every retry; the stream resumes after
// the last event printed, so none is printed twice or lost to a restart.
func followEvents(ctx context.Context, d *daemonAPI, q url.Values, last int64, out eventPrinter, notes io.Writer, retry time.Duration) error {
	gone := false
	for {
		q.Set("since", strconv.FormatInt(last, 10))
		var printErr error
		err := streamEvents(ctx, d, "/api/v1/events/stream?"+q.Encode(), func(e daemon.EventDoc) error {
			last = max(last, e.ID)
			printErr = out.print([]daemon.EventDoc{e})
			return printErr
		}, func() {
			if gone {
				fmt.Fprintf(notes, "gpuletd at %s answers again\n", d.base)
				gone = false
			}
		})
		if ctx.Err() != nil {
			return nil
		}
		if printErr != nil {
			return fmt.Errorf("print events: %w", printErr) // where they go is gone: the daemon is not
		}
		var he *loadgen.HTTPError
		if errors.As(err, &he) && he.Code < http.StatusInternalServerError {
			return d.fail(err) // the daemon refused the filter: asking again changes nothing
		}
		if !gone {
			why := "the stream ended"
			if err != nil {
				why = err.Error()
			}
			fmt.Fprintf(notes, "gpuletd at %s stopped answering (%s); waiting for it\n", d.base, why)
			gone = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry):
		}
	}
}

// streamEvents reads the server-sent events at path, handing each event to
// emit, and calls connected once the daemon has answered. It returns when
// the stream ends (nil), breaks or ctx ends.
func streamEvents(ctx context.Context, d *daemonAPI, path string, emit func(daemon.EventDoc) error, connected func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", loadgen.ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return &loadgen.HTTPError{URL: req.URL.String(), Code: resp.StatusCode, Message: loadgen.ErrorMessage(body)}
	}
	connected()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue // id:, event:, keep-alive comments and the blank lines between
		}
		var e daemon.EventDoc
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &e); err != nil {
			return fmt.Errorf("decode event: %w", err)
		}
		if err := emit(e); err != nil {
			return err
		}
	}
	return sc.Err()
}

// eventPrinter prints events as lines of text, or of JSON.
type eventPrinter struct {
	w      io.Writer
	asJSON bool
	loc    *time.Location
	filter store.EventFilter
	// color marks warnings and errors in the terminal's colours, as
	// journalctl does (a terminal, and NO_COLOR unset).
	color bool
}

// picks says whether the printer's filter picks e.
func (p eventPrinter) picks(e daemon.EventDoc) bool {
	return p.filter.Match(store.Event{At: e.At, Kind: e.Kind, Severity: store.Severity(e.Severity), Attrs: e.Attrs})
}

func (p eventPrinter) print(evs []daemon.EventDoc) error {
	for _, e := range evs {
		if !p.picks(e) {
			continue
		}
		var line string
		if p.asJSON {
			b, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("encode event %d: %w", e.ID, err)
			}
			line = string(b)
		} else {
			line = eventLine(e, p.loc, p.color)
		}
		if _, err := fmt.Fprintln(p.w, line); err != nil {
			return err
		}
	}
	return nil
}

// severityColors are the terminal's colours of the severities eventLine
// marks: bold yellow and bold red.
var severityColors = map[string]string{"warning": "\x1b[1;33m", "error": "\x1b[1;31m"}

// eventLine is one event as a line: when (in loc), its ID, severity and
// kind, the message and the attributes by name; with color, a warning's or
// an error's severity and message in its colour.
//
//	2026-11-28 11:05:37 #412 warning executor_restart: executor exited; restarting it (backoff=1s gpulet=cpu-100-0)
func eventLine(e daemon.EventDoc, loc *time.Location, color bool) string {
	id := "#" + strconv.FormatInt(e.ID, 10)
	if e.Unsaved {
		id = "(unsaved)"
	}
	sev, kind, msg := e.Severity, e.Kind, e.Message
	if c, ok := severityColors[sev]; ok && color {
		sev, msg = c+sev+"\x1b[0m", c+msg+"\x1b[0m"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s: %s", e.At.In(loc).Format(time.DateTime), id, sev, kind, msg)
	if len(e.Attrs) > 0 {
		attrs := make([]string, 0, len(e.Attrs))
		for _, k := range slices.Sorted(maps.Keys(e.Attrs)) {
			v := e.Attrs[k]
			if strings.ContainsAny(v, " \t\n\"") || v == "" {
				v = strconv.Quote(v)
			}
			attrs = append(attrs, k+"="+v)
		}
		b.WriteString(" (" + strings.Join(attrs, " ") + ")")
	}
	return b.String()
}

// parseSince reads --since as of now: an event's ID, or the moment from
// which events are listed.
func parseSince(v string, now time.Time) (id int64, after time.Time, err error) {
	v = strings.TrimSpace(v)
	if id, err := strconv.ParseInt(v, 10, 64); err == nil && id >= 0 {
		return id, time.Time{}, nil
	}
	loc := now.Location()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	switch v {
	case "today":
		return -1, midnight, nil
	case "yesterday":
		return -1, midnight.AddDate(0, 0, -1), nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n > 0 {
			return -1, now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return -1, now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return -1, t, nil
	}
	for _, layout := range []string{time.DateTime, "2006-01-02 15:04", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return -1, t, nil
		}
	}
	for _, layout := range []string{time.TimeOnly, "15:04"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return -1, time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc), nil
		}
	}
	return -1, time.Time{}, fmt.Errorf("--since %q: give an event's ID (412), a time back from now (30m, 2h, 3d), today, yesterday, a time of day (10:00) or a date and time (2026-11-28 10:00, or RFC 3339)", v)
}
