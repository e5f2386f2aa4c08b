package planner

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseLLMPlan(t *testing.T) {
	lp, err := ParseLLMPlan(json.RawMessage(`{"task_type":"x","complexity":"simple","phases":[
		{"phase":3,"goal":" run it ","success_criteria":["a","b"]},{"phase":7,"goal":"fix it","success_criteria":"prints 2"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ph := lp.Plan.Phases
	if len(ph) != 2 || ph[0].Phase != 1 || ph[0].Goal != "run it" || ph[0].SuccessCriteria != "a; b" || ph[1].Phase != 2 || lp.TaskType != "x" {
		t.Errorf("plan %+v", lp)
	}
	for _, bad := range []string{`{}`, `{"phases":[]}`, `{"phases":[{"phase":1}]}`, `{"phases":"x"}`,
		`{"phases":[{"goal":"1"},{"goal":"2"},{"goal":"3"},{"goal":"4"},{"goal":"5"},{"goal":"6"},{"goal":"7"},{"goal":"8"},{"goal":"9"},{"goal":"10"},{"goal":"11"}]}`} {
		if _, err := ParseLLMPlan(json.RawMessage(bad)); !errors.Is(err, ErrLLMPlan) {
			t.Errorf("%s: err %v", bad, err)
		}
	}
}
