package event

import "reflect"

// Redacted returns a copy of e with every string in its payload (fields,
// parameters, lists; nested maps and slices too) passed through str, and
// each parameter map first through params (which may replace values whose
// names say secret). e itself is not changed.
func (e Event) Redacted(str func(string) string, params func(map[string]any) map[string]any) Event {
	p := e.payload()
	if p == nil {
		return e
	}
	v := reflect.ValueOf(p).Elem()
	cp := reflect.New(v.Type())
	cp.Elem().Set(v)
	redactFields(cp.Elem(), str, params)
	out := e
	out.Host = str(e.Host)
	reflect.ValueOf(&out).Elem().FieldByName(payloadField[e.Kind]).Set(cp)
	return out
}

// payloadField is the name of each kind's payload field in Event.
var payloadField = map[Kind]string{
	KindPlan: "Plan", KindPhase: "Phase", KindStepStart: "StepStart", KindStep: "Step",
	KindApproval: "Approval", KindDone: "Done", KindThought: "Thought", KindAnswer: "Answer",
	KindLLM: "LLM", KindReplan: "Replan", KindReplay: "Replay", KindBatch: "Batch",
	KindHost: "HostEnd", KindWarning: "Warning", KindOutput: "Output",
}

func redactFields(v reflect.Value, str func(string) string, params func(map[string]any) map[string]any) {
	t := v.Type()
	for i := range t.NumField() {
		f, sf := v.Field(i), t.Field(i)
		if !sf.IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(str(f.String()))
		case reflect.Struct:
			redactFields(f, str, params)
		case reflect.Slice:
			switch xs := f.Interface().(type) {
			case []string:
				if xs != nil {
					out := make([]string, len(xs))
					for j, x := range xs {
						out[j] = str(x)
					}
					f.Set(reflect.ValueOf(out))
				}
			case []PhaseInfo:
				if xs != nil {
					out := make([]PhaseInfo, len(xs))
					for j, x := range xs {
						c := reflect.ValueOf(&x).Elem()
						redactFields(c, str, params)
						out[j] = x
					}
					f.Set(reflect.ValueOf(out))
				}
			}
		case reflect.Map:
			if m, ok := f.Interface().(map[string]any); ok && m != nil {
				if params != nil {
					m = params(m)
				}
				f.Set(reflect.ValueOf(RedactValue(m, str)))
			}
		}
	}
}

// RedactValue returns a copy of v with str applied to every string in it,
// through maps and slices (a parameter value, an audit entry's
// parameters); other values are returned as they are.
func RedactValue(v any, str func(string) string) any {
	switch v := v.(type) {
	case string:
		return str(v)
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = RedactValue(x, str)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = RedactValue(x, str)
		}
		return out
	case []string:
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = str(x)
		}
		return out
	}
	return v
}
