package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/sim/loadgen"
)

// requestParamsFlag is perf_analyzer's --request-parameter NAME:VALUE:TYPE,
// repeated: parameters every request carries, TYPE bool, int or string.
type requestParamsFlag []loadgen.Parameter

// requestParamsUsage is the flag's help in infer and load.
const requestParamsUsage = "a request parameter, NAME:VALUE:TYPE with TYPE bool, int or string (as perf_analyzer's --request-parameter, over REST and gRPC), every request carrying it; repeat for more"

// Set reads one NAME:VALUE:TYPE; the value may hold colons.
func (r *requestParamsFlag) Set(s string) error {
	i, j := strings.IndexByte(s, ':'), strings.LastIndexByte(s, ':')
	if i <= 0 || j == i {
		return fmt.Errorf("%q: give NAME:VALUE:TYPE, such as max_tokens:256:int (TYPE bool, int or string)", s)
	}
	name, value, typ := s[:i], s[i+1:j], strings.ToLower(s[j+1:])
	p := loadgen.Parameter{Name: name}
	switch typ {
	case "bool":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%q: %q is not a bool (true or false)", s, value)
		}
		p.Value = b
	case "int":
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			p.Value = n
		} else if u, err := strconv.ParseUint(value, 10, 64); err == nil {
			p.Value = u
		} else {
			return fmt.Errorf("%q: %q is not a whole number", s, value)
		}
	case "string":
		p.Value = value
	default:
		return fmt.Errorf("%q: type %q: give bool, int or string", s, typ)
	}
	for _, q := range *r {
		if q.Name == name {
			return fmt.Errorf("%q: parameter %s is given twice", s, name)
		}
	}
	*r = append(*r, p)
	return nil
}

func (r *requestParamsFlag) String() string {
	parts := make([]string, len(*r))
	for i, p := range *r {
		typ := "string"
		switch p.Value.(type) {
		case bool:
			typ = "bool"
		case int64, uint64:
			typ = "int"
		}
		parts[i] = fmt.Sprintf("%s:%v:%s", p.Name, p.Value, typ)
	}
	return strings.Join(parts, ",")
}

// Type names the flag's value in the help.
func (r *requestParamsFlag) Type() string { return "NAME:VALUE:TYPE" }
