package format

// slurmrestd's answers (openapi/v0.0.38 and openapi/dbv0.0.38 of 22.05),
// printed as slurmrestd prints them: the same serializer as the commands'
// --json (slurmJSON), so the same indent, key order and "\/".

// RESTField is one top-level key of an answer after meta and errors: its
// value a string, an int, a bool, or an empty list (nil).
type RESTField struct {
	Key string
	Val any
}

// RESTError is one entry of an answer's errors list. slurmrestd writes two
// kinds: a call's failure (Description, Number, Error, Source: "error_number")
// and a parser's or the controller's note (Error, Code: "error_code"),
// each with its keys in the order recorded.
type RESTError struct {
	Description string
	Number      int
	Error       string
	Source      string
	// Code, when not 0, makes this a note: {"error": ..., "error_code": N},
	// or with CodeFirst {"error_code": N, "error": ...}.
	Code      int
	CodeFirst bool
}

// RESTDoc is one slurmrestd answer: meta (db: the dbv0.0.38 plugin's),
// errors, then fields.
func RESTDoc(db bool, errs []RESTError, fields ...RESTField) string {
	meta := jsonMeta()
	if db {
		meta[0].val = jsonObject{{"type", "openapi/dbv0.0.38"}, {"name", "Slurm OpenAPI DB v0.0.38"}}
	}
	list := []any{}
	for _, e := range errs {
		switch {
		case e.Code != 0 && e.CodeFirst:
			list = append(list, jsonObject{{"error_code", e.Code}, {"error", e.Error}})
		case e.Code != 0:
			list = append(list, jsonObject{{"error", e.Error}, {"error_code", e.Code}})
		case e.Description == "":
			list = append(list, jsonObject{{"error_number", e.Number}, {"error", e.Error}, {"source", e.Source}})
		default:
			list = append(list, jsonObject{{"description", e.Description}, {"error_number", e.Number},
				{"error", e.Error}, {"source", e.Source}})
		}
	}
	o := jsonObject{{"meta", meta}, {"errors", list}}
	for _, f := range fields {
		v := f.Val
		if v == nil {
			v = []any{}
		}
		o = append(o, jsonKV{f.Key, v})
	}
	return slurmJSON(o)
}

// RESTPings is /slurm/v0.0.38/ping's answer for the one controller.
func RESTPings(hostname string) string {
	return slurmJSON(jsonObject{{"meta", jsonMeta()}, {"errors", []any{}}, {"pings", []any{
		jsonObject{{"hostname", hostname}, {"ping", "UP"}, {"status", 0}, {"mode", "primary"}},
	}}})
}
