package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/promnames"
)

// vars are values for the dashboard's variables that select everything.
var vars = map[string]string{"instance": ".*", "model": ".*", "__rate_interval": "5m"}

// panel is what the layout test reads of a panel.
type panel struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	GridPos     struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Datasource struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
}

// TestDashboardLayout: the dashboard has its identity, a data source
// variable every query uses, and panels that each have a title, a
// description and queries, laid out on Grafana's 24 columns without two
// of them on one cell.
func TestDashboardLayout(t *testing.T) {
	var d struct {
		UID           string  `json:"uid"`
		Title         string  `json:"title"`
		SchemaVersion int     `json:"schemaVersion"`
		Panels        []panel `json:"panels"`
		Templating    struct {
			List []struct {
				Type, Name string
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(Grafana, &d))
	require.Equal(t, "gpuletd", d.UID)
	require.Equal(t, "gpuletd", d.Title)
	require.GreaterOrEqual(t, d.SchemaVersion, 36, "Grafana 9 and later read it")
	require.NotEmpty(t, d.Templating.List)
	ds := d.Templating.List[0]
	require.Equal(t, "datasource", ds.Type)
	require.Equal(t, "datasource", ds.Name)

	ids := map[int]string{}
	titles := map[string]bool{}
	taken := map[[2]int]string{}
	for _, p := range d.Panels {
		require.NotZero(t, p.ID, p.Title)
		require.Empty(t, ids[p.ID], "panels %q and %q share id %d", ids[p.ID], p.Title, p.ID)
		ids[p.ID] = p.Title
		require.NotEmpty(t, p.Title)
		require.False(t, titles[p.Title], "two panels are titled %q: a reader, and Query.Where, could not tell them apart", p.Title)
		titles[p.Title] = true
		g := p.GridPos
		require.True(t, g.X >= 0 && g.W > 0 && g.X+g.W <= 24 && g.H > 0 && g.Y >= 0, "%q at %+v", p.Title, g)
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				require.Empty(t, taken[[2]int{x, y}], "%q and %q overlap at column %d, row %d", taken[[2]int{x, y}], p.Title, x, y)
				taken[[2]int{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Description, "%q says what it shows", p.Title)
		require.Equal(t, "${datasource}", p.Datasource.UID, p.Title)
		require.NotEmpty(t, p.Targets, p.Title)
		refs := map[string]bool{}
		for _, q := range p.Targets {
			require.NotEmpty(t, strings.TrimSpace(q.Expr), p.Title)
			require.Equal(t, "${datasource}", q.Datasource.UID, p.Title)
			require.False(t, refs[q.RefID], "%q: refId %s twice", p.Title, q.RefID)
			refs[q.RefID] = true
		}
	}
}

// TestQueriesArePromQL: promtool reads every query of the dashboard, its
// variables set to select everything, as a recording rule.
func TestQueriesArePromQL(t *testing.T) {
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed; make test-deps installs it")
	}
	qs, err := Queries(vars)
	require.NoError(t, err)
	require.Greater(t, len(qs), 40)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range qs {
		expr, err := json.Marshal(q.Expr) // a JSON string is a YAML string
		require.NoError(t, err)
		fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", i, expr)
	}
	path := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	require.NoError(t, os.WriteFile(path, []byte(rules.String()), 0o600))
	out, err := exec.Command(bin, "check", "rules", path).CombinedOutput()
	require.NoError(t, err, "promtool check rules:\n%s", out)
	require.Contains(t, string(out), fmt.Sprintf("SUCCESS: %d rules found", len(qs)))
}

// TestQueriesNeedEveryVariable: a query whose variable has no value is an
// error naming it, not a query with a hole.
func TestQueriesNeedEveryVariable(t *testing.T) {
	_, err := Queries(map[string]string{"instance": ".*", "__rate_interval": "5m"})
	require.ErrorContains(t, err, "no value for variable $model")
	qs, err := Queries(vars)
	require.NoError(t, err)
	for _, q := range qs {
		require.NotContains(t, q.Expr, "$", q.Where)
	}
	require.Contains(t, qs, Query{Where: "variable model", Expr: `gpuletd_model_state{instance=~".*"}`})
}

// TestDashboardReadsDocumentedMetrics: every gpuletd family the dashboard
// reads is a row of OPERATIONS.md's metrics table.
func TestDashboardReadsDocumentedMetrics(t *testing.T) {
	names := Metrics()
	require.Contains(t, names, "gpuletd_request_duration_seconds")
	missing, err := promnames.Undocumented(filepath.Join("..", "docs", "OPERATIONS.md"), names)
	require.NoError(t, err)
	require.Empty(t, missing, "read by the dashboard but not in OPERATIONS.md's metrics table")
}
