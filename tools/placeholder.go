package tools

// Placeholder returns a valid value of the type of tool's parameter param
// (planner.ParamTyper), for plan validation of a parameter written as one
// whole template: ok is false when the tool or parameter is unknown or
// any string fits.
func (r *Registry) Placeholder(tool, param string) (any, bool) {
	t, ok := r.tools[tool]
	if !ok {
		return nil, false
	}
	p := t.Schema().Properties[param]
	if p == nil {
		return nil, false
	}
	return placeholder(p)
}

// placeholder is a valid value of p's type; ok is false when a string
// (any string) already fits.
func placeholder(p *Property) (any, bool) {
	switch p.Type {
	case "string":
		if len(p.Enum) > 0 {
			return p.Enum[0], true
		}
	case "integer":
		return 1, true
	case "number":
		return 1.0, true
	case "boolean":
		return false, true
	case "array":
		if p.Items != nil {
			if item, ok := placeholder(p.Items); ok {
				return []any{item}, true
			}
		}
	case "object":
		return map[string]any{}, true
	}
	return nil, false
}
