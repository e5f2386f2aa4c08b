package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// The scripts share one plan: find the command (the first word that is
// not a flag or a flag's value), and the -i and -F given so far; after
// a flag that takes a value offer that value (hosts, files, an enum, or
// nothing); after "--" (agent exec's command) nothing; else flags when
// the word starts with "-", sub-commands, or files.

// casePattern joins flags for a shell case pattern: "--a|-b".
func (s completionSpec) casePattern(kind string) string {
	return strings.Join(s.byKind(kind), "|")
}

// writeVars writes the shell variables the bash and zsh functions read,
// each list as list formats it: the commands, the flags before a command
// and each command's, each command's sub-commands, the flags taking a value.
func (s completionSpec) writeVars(b *strings.Builder, list func([]string) string) {
	fmt.Fprintf(b, "_agent_cmds=%s\n_agent_flags_=%s\n", list(s.commands), list(s.global))
	cmds := append([]string(nil), s.commands...)
	sort.Strings(cmds)
	for _, c := range cmds {
		if fl, ok := s.flags[c]; ok {
			fmt.Fprintf(b, "_agent_flags_%s=%s\n", shellVar(c), list(fl))
		}
		if subs, ok := s.subs[c]; ok {
			fmt.Fprintf(b, "_agent_subs_%s=%s\n", shellVar(c), list(subs))
		}
	}
	valued := append(append(s.byKind(valueFile), s.byKind(valueHost)...), s.byKind(valueOther)...)
	fmt.Fprintf(b, "_agent_valued=%s\n", list(valued))
}

func (s completionSpec) bash(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# agent completion for bash. Load it with: source <(agent completion bash)\n")
	s.writeVars(&b, func(w []string) string { return strconv.Quote(" " + strings.Join(w, " ") + " ") })
	fmt.Fprintf(&b, `_agent() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local i w cmd= sub= list
  local -a inv=() cfg=()
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      --) return 0 ;;
      -i|--inventory) inv+=(-i "${COMP_WORDS[i+1]}"); ((i++)); continue ;;
      -F|--ssh-config) cfg=(-F "${COMP_WORDS[i+1]}"); ((i++)); continue ;;
      -*) [[ $w != *=* && $_agent_valued == *" $w "* ]] && ((i++)); continue ;;
    esac
    if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi
  done
  case $prev in
    %s) COMPREPLY=($(compgen -W "$(agent completion hosts "${inv[@]}" "${cfg[@]}" 2>/dev/null)" -- "$cur")); return 0 ;;
    %s) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    --approve) COMPREPLY=($(compgen -W %q -- "$cur")); return 0 ;;
    --mode) COMPREPLY=($(compgen -W %q -- "$cur")); return 0 ;;
    %s) return 0 ;;
  esac
  if [[ $cur == -* ]]; then
    eval "list=\$_agent_flags_${cmd//-/_}"
    COMPREPLY=($(compgen -W "$list" -- "$cur")); return 0
  fi
  if [[ -z $cmd ]]; then COMPREPLY=($(compgen -W "$_agent_cmds" -- "$cur")); return 0; fi
  if [[ -z $sub ]]; then
    eval "list=\$_agent_subs_${cmd//-/_}"
    if [[ -n $list ]]; then COMPREPLY=($(compgen -W "$list" -- "$cur")); return 0; fi
  fi
  case $cmd in
    help) [[ -z $sub ]] && COMPREPLY=($(compgen -W "$_agent_cmds" -- "$cur")) ;;
    ssh-config) COMPREPLY=($(compgen -W "$(agent completion hosts "${cfg[@]}" 2>/dev/null)" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
  return 0
}
complete -o default -F _agent agent
`, s.casePattern(valueHost), s.casePattern(valueFile), strings.Join(enumValues["--approve"], " "), strings.Join(enumValues["--mode"], " "), s.casePattern(valueOther))
	_, err := io.WriteString(w, b.String())
	return err
}

func (s completionSpec) zsh(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef agent\n# agent completion for zsh. Load it with: source <(agent completion zsh) (after compinit)\n")
	s.writeVars(&b, func(w []string) string { return "(" + strings.Join(w, " ") + ")" })
	fmt.Fprintf(&b, `_agent() {
  local cur=${words[CURRENT]} prev=${words[CURRENT-1]}
  local i w cmd= sub= v
  local -a inv cfg
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    case $w in
      --) return 0 ;;
      -i|--inventory) inv+=(-i "${words[i+1]}"); ((i++)); continue ;;
      -F|--ssh-config) cfg=(-F "${words[i+1]}"); ((i++)); continue ;;
      -*) [[ $w != *=* && ${_agent_valued[(Ie)$w]} -gt 0 ]] && ((i++)); continue ;;
    esac
    if [[ -z $cmd ]]; then cmd=$w; elif [[ -z $sub ]]; then sub=$w; fi
  done
  case $prev in
    %s) compadd -- ${(f)"$(agent completion hosts $inv $cfg 2>/dev/null)"}; return 0 ;;
    %s) _files; return 0 ;;
    --approve) compadd -- %s; return 0 ;;
    --mode) compadd -- %s; return 0 ;;
    %s) return 0 ;;
  esac
  if [[ $cur == -* ]]; then
    v=_agent_flags_${cmd//-/_}
    compadd -- ${(P)v}; return 0
  fi
  if [[ -z $cmd ]]; then compadd -- $_agent_cmds; return 0; fi
  if [[ -z $sub ]]; then
    v=_agent_subs_${cmd//-/_}
    if (( ${+parameters[$v]} )); then compadd -- ${(P)v}; return 0; fi
  fi
  case $cmd in
    help) [[ -z $sub ]] && compadd -- $_agent_cmds ;;
    ssh-config) compadd -- ${(f)"$(agent completion hosts $cfg 2>/dev/null)"} ;;
    *) _files ;;
  esac
  return 0
}
if (( $+functions[compdef] )); then compdef _agent agent; fi
`, s.casePattern(valueHost), s.casePattern(valueFile), strings.Join(enumValues["--approve"], " "), strings.Join(enumValues["--mode"], " "), s.casePattern(valueOther))
	_, err := io.WriteString(w, b.String())
	return err
}

func (s completionSpec) fish(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`# agent completion for fish. Load it with: agent completion fish | source
function __agent_hosts
    set -l args
    set -l words (commandline -opc)
    for i in (seq (count $words))
        switch $words[$i]
            case -i --inventory -F --ssh-config
                set -l j (math $i + 1)
                if test $j -le (count $words)
                    set args $args $words[$i] $words[$j]
                end
        end
    end
    agent completion hosts $args 2>/dev/null
end
complete -c agent -f
`)
	fmt.Fprintf(&b, "complete -c agent -n __fish_use_subcommand -a %q\n", strings.Join(s.commands, " "))
	flagLine := func(cond, f string) {
		b.WriteString("complete -c agent")
		if cond != "" {
			fmt.Fprintf(&b, " -n %q", cond)
		}
		if strings.HasPrefix(f, "--") {
			fmt.Fprintf(&b, " -l %s", f[2:])
		} else {
			fmt.Fprintf(&b, " -s %s", f[1:])
		}
		switch s.values[f] {
		case valueHost:
			b.WriteString(" -x -a '(__agent_hosts)'")
		case valueFile:
			b.WriteString(" -r -F")
		case valueOther:
			if e, ok := enumValues[f]; ok {
				fmt.Fprintf(&b, " -x -a %q", strings.Join(e, " "))
			} else {
				b.WriteString(" -x")
			}
		}
		b.WriteString("\n")
	}
	for _, f := range s.global {
		if f != "--help" {
			flagLine("", f)
		}
	}
	global := map[string]bool{}
	for _, f := range s.global {
		global[f] = true
	}
	cmds := append([]string(nil), s.commands...)
	sort.Strings(cmds)
	for _, c := range cmds {
		cond := "__fish_seen_subcommand_from " + c
		for _, f := range s.flags[c] {
			if !global[f] && f != "--help" {
				flagLine(cond, f)
			}
		}
		if subs, ok := s.subs[c]; ok {
			fmt.Fprintf(&b, "complete -c agent -n %q -a %q\n", cond+"; and not __fish_seen_subcommand_from "+strings.Join(subs, " "), strings.Join(subs, " "))
		}
	}
	b.WriteString("complete -c agent -n '__fish_seen_subcommand_from help' -a " + fmt.Sprintf("%q", strings.Join(s.commands, " ")) + "\n")
	b.WriteString("complete -c agent -n '__fish_seen_subcommand_from ssh-config' -a '(__agent_hosts)'\n")
	b.WriteString("complete -c agent -n '__fish_seen_subcommand_from run report audit' -F\n")
	_, err := io.WriteString(w, b.String())
	return err
}
