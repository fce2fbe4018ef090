// Package studylayout is the on-disk form of a coding-agent study, shared by the three
// programs that meet it: envgap crawl lite (imports it as Lite candidates), envgap study run
// (writes it, running the paper's Gen/Repair protocol) and envgap study report (computes
// the paper's metrics from it).
//
//	STUDY/
//	  problems.json                       optional: the problem list, or entries that fill
//	                                      or override it (number, title, domain, ...)
//	  <agent>/<language>-t<trial>/p<N>/   one project (language: python, cpp, java, javascript)
//	    meta.json                         what the study recorded (see Meta)
//	    written/                          the project exactly as the agent wrote it (M(0))
//	    repaired/                         the project as it was when it ran (when repaired)
//	    prompt.txt                        optional: the exact task text the agent got
//	    rounds.json                       optional: the protocol's record (envgap study run)
//	    layers.json                       optional: D2 and D3 measured on the final project
//
// crawl lite reads meta.json, written/, repaired/ and prompt.txt and ignores the rest;
// the report reads everything. A Problem's stdlib_sufficient marks the tasks the standard
// library solves (the paper's UDR); a Meta's repair_rounds and error_class carry what the
// paper's Figure 5 and Table 6 need when the study recorded it by hand.
package studylayout
