package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/sim/loadgen"
)

func newInferCmd(g *globalFlags) *cobra.Command {
	var (
		url, request, grpcAddr string
		protocol               string
		version                string
		headers                []string
		top                    int
		params                 paramFlags
		seed                   uint64
		asJSON                 bool
		shapes                 shapesFlag
		inputDataFlag          string
	)
	cmd := &cobra.Command{
		Use:   "infer MODEL",
		Short: "Send one request to a running daemon's model and print the answer",
		Long: `Send MODEL one inference request (POST /v2/models/MODEL/infer) and print
each output: its data type, shape and first values, or with --top K each
row's K best classes (Triton's classification extension). The inputs are
random tensors of the shapes the model declares (batch 1), or the KServe v2
JSON body in --request FILE ("-": standard input). A refusal prints the
daemon's reason and exits 1. It reaches the daemon as the other commands do
(over https, with a client certificate, as the configuration says), so it
checks a deployment end to end; with --protocol grpc (-i grpc, as
perf_analyzer's) the request goes to the daemon's gRPC listener, or with
--grpc HOST:PORT to that one, as one ModelInfer call (raw_input_contents),
and the answer prints the same way.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.completeModelArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			if err := d.addHeaders(headers); err != nil {
				return err
			}
			defer d.closeGRPC()
			defer d.client.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(cmd.Context(), adminTimeout)
			defer cancel()
			zero := inputDataFlag == inputZero
			if inputDataFlag != inputRandom && !zero {
				if request != "" {
					return errors.New("infer: give the request file once: --request or --input-data")
				}
				request = inputDataFlag // a file, as --request
			}
			target, err := grpcTarget(ctx, d, protocol, grpcAddr)
			if err != nil {
				return err
			}
			body, err := inferBody(ctx, cmd.InOrStdin(), d, target, args[0], version, request, top, generated{seed: seed, shapes: shapes, zero: zero})
			if err != nil {
				return err
			}
			if params.given() {
				if body, err = params.set(body); err != nil {
					return err
				}
			}
			if target != "" {
				answer, took, refused, err := inferGRPC(ctx, d, target, args[0], version, body)
				switch {
				case err != nil:
					return err
				case refused != "":
					return &exitError{code: 1, msg: fmt.Sprintf("gpuletd: %s refused the request: %s", args[0], refused)}
				case asJSON:
					return printRaw(cmd.OutOrStdout(), answer)
				}
				return writeAnswer(cmd.OutOrStdout(), answer, took)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+loadgen.ModelPath(args[0], version)+"/infer", bytes.NewReader(body))
			if err != nil {
				return fmt.Errorf("build request: %w", err)
			}
			req.Header.Set("Content-Type", "application/json")
			start := time.Now()
			code, answer, msg, err := loadgen.Call(ctx, d.client, req, 64<<20)
			took := time.Since(start)
			if err != nil {
				return d.fail(err)
			}
			if code != http.StatusOK {
				return &exitError{code: 1, msg: fmt.Sprintf("gpuletd: %s refused the request: %d %s: %s", args[0], code, http.StatusText(code), msg)}
			}
			if asJSON {
				return printRaw(cmd.OutOrStdout(), answer)
			}
			return writeAnswer(cmd.OutOrStdout(), answer, took)
		},
	}
	f := cmd.Flags()
	addURLFlag(f, &url)
	f.StringVar(&grpcAddr, "grpc", "", "send it to the gRPC listener at HOST:PORT (ModelInfer) instead of REST, which gives the model's shapes too (ModelMetadata, ModelConfig)")
	registerProtocolFlag(cmd, &protocol)
	f.StringArrayVarP(&headers, "header", "H", nil, headerUsage)
	registerPerfAnalyzerSSL(cmd)
	f.StringVar(&request, "request", "", `a KServe v2 JSON request body to send ("-": standard input) instead of random inputs`)
	f.IntVar(&top, "top", 0, "ask for each output row's K best classes instead of its values")
	f.Uint64Var(&seed, "seed", 1, "seed of the random inputs")
	f.Var(&shapes, "shape", shapeUsage)
	f.StringVar(&inputDataFlag, "input-data", inputRandom, "the request's data: random, zero (integer inputs that index a table, token ids or types, stay in its first row), or a request file as --request (perf_analyzer's data JSON too: its first request), as perf_analyzer's --input-data")
	f.BoolVar(&asJSON, "json", false, "print the daemon's answer as it is")
	params.register(f)
	f.StringVarP(&version, "model-version", "x", "", "the version of MODEL to ask (POST /v2/models/MODEL/versions/V/infer, gRPC model_version), as perf_analyzer's -x; default the daemon's newest")
	return cmd
}

// generated says how infer makes a request's inputs when no file gives it.
type generated struct {
	seed   uint64
	shapes shapesFlag
	zero   bool
}

// inferBody is the request to send: the given body, or generated inputs of
// the model's shapes (read over gRPC from grpcAddr when the request goes
// there); with top, every output asked for as its classes.
func inferBody(ctx context.Context, stdin io.Reader, d *daemonAPI, grpcAddr, model, version, request string, top int, gen generated) ([]byte, error) {
	if top < 0 {
		return nil, fmt.Errorf("infer: --top %d: give a number of classes above 0", top)
	}
	var body []byte
	var m *loadgen.Model
	var err error
	if request == "" || top > 0 {
		if m, err = modelOf(ctx, d, grpcAddr, model, version); err != nil {
			return nil, err
		}
	}
	switch request {
	case "":
		m.SetShapes(gen.shapes)
		var p *loadgen.Payload
		if gen.zero {
			p, err = loadgen.NewZeroPayload(m, false)
		} else {
			p, err = loadgen.NewPayload(m, false, gen.seed)
		}
		if err != nil {
			return nil, err
		}
		body = p.Body
	case "-":
		if body, err = io.ReadAll(io.LimitReader(stdin, 64<<20)); err != nil {
			return nil, fmt.Errorf("read the request from standard input: %w", err)
		}
	default:
		if fi, err := os.Stat(request); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("infer: %s is a folder of binary tensors (perf_analyzer's --input-data DIR); gpuletd infer sends JSON: gpuletd load sends the folder's, or give a request file", request)
		}
		if body, err = os.ReadFile(request); err != nil {
			return nil, fmt.Errorf("read the request: %w", err)
		}
	}
	if request != "" && loadgen.IsInputData(body) {
		if body, err = firstOfInputData(ctx, d, grpcAddr, m, model, version, body); err != nil {
			return nil, err
		}
	}
	if top == 0 {
		return body, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("infer: --top needs a JSON request: %w", err)
	}
	type output struct {
		Name       string         `json:"name"`
		Parameters map[string]int `json:"parameters"`
	}
	outs := make([]output, 0, len(m.Metadata.Outputs))
	for _, o := range m.Metadata.Outputs {
		outs = append(outs, output{Name: o.Name, Parameters: map[string]int{"classification": top}})
	}
	if doc["outputs"], err = json.Marshal(outs); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// shownValues is how many of an output's values are printed.
const shownValues = 8

// writeAnswer prints an inference answer: the model, the time it took, and
// each output's data type, shape and first values (a classification's
// classes row by row).
func writeAnswer(w io.Writer, raw []byte, took time.Duration) error {
	var a struct {
		Model   string `json:"model_name"`
		Version string `json:"model_version"`
		Outputs []struct {
			Name     string            `json:"name"`
			DataType string            `json:"datatype"`
			Shape    []int64           `json:"shape"`
			Data     []json.RawMessage `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "model\t%s (version %s), answered in %s\n", a.Model, a.Version, dur(took))
	for _, o := range a.Outputs {
		shape := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(o.Shape)), " "), "[]")
		if o.DataType == "BYTES" {
			// Strings, such as classes ("score:index[:label]"): a line per
			// row.
			fmt.Fprintf(tw, "%s\tBYTES [%s]\n", o.Name, shape)
			row := len(o.Data)
			if len(o.Shape) > 1 && o.Shape[len(o.Shape)-1] > 0 {
				row = int(o.Shape[len(o.Shape)-1])
			}
			for i := 0; i < len(o.Data); i += row {
				var elems []string
				for _, v := range o.Data[i:min(i+row, len(o.Data))] {
					var s string
					if json.Unmarshal(v, &s) != nil {
						s = string(v)
					}
					elems = append(elems, s)
				}
				fmt.Fprintf(tw, "\trow %d: %s\n", i/max(row, 1), strings.Join(elems, ", "))
			}
			continue
		}
		vals := make([]string, 0, shownValues)
		for _, v := range o.Data[:min(len(o.Data), shownValues)] {
			vals = append(vals, string(v))
		}
		more := ""
		switch {
		case len(o.Data) > shownValues:
			more = fmt.Sprintf(" … (%d values)", len(o.Data))
		case len(o.Data) == 0:
			more = "(no values: sent as binary data)"
		}
		fmt.Fprintf(tw, "%s\t%s [%s]  %s%s\n", o.Name, o.DataType, shape, strings.Join(vals, " "), more)
	}
	return tw.Flush()
}

// firstOfInputData is the first request of perf_analyzer's data file b,
// built for the model's inputs (m when fetched already), as JSON.
func firstOfInputData(ctx context.Context, d *daemonAPI, grpcAddr string, m *loadgen.Model, model, version string, b []byte) ([]byte, error) {
	data, err := loadgen.ParseInputData(b)
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	if m == nil {
		if m, err = modelOf(ctx, d, grpcAddr, model, version); err != nil {
			return nil, err
		}
	}
	p, err := data.First(m)
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	if p.JSONLen >= 0 {
		return nil, errors.New(`infer: the data file's first request has an input in base64, which goes as a binary tensor; gpuletd infer sends JSON: give its values as a list`)
	}
	return p.Body, nil
}
