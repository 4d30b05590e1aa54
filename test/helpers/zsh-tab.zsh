# zsh -f zsh-tab.zsh SETUP LINE: the candidates a real zsh offers at a Tab after LINE.
#
# An interactive `zsh -f` on a pseudo-terminal (zsh/zpty) runs SETUP (compinit, and the
# completion script installed as a user installs it), then LINE is typed and Tab pressed: zle's
# completion (compinit's _main_complete) dispatches to the function registered for the command,
# with `words` and `CURRENT` set by zsh itself. Each match added (compadd, after zsh's own
# matching against the word) is printed, one a line, between two NUL lines that the completion
# hooks print; then the shell exits. Return and newline are unbound: nothing typed runs.
# (After Valodim/zsh-capture-completion, reduced to what the test needs.)
zmodload zsh/zpty
zpty tab zsh -f -i
zpty -w tab 'PROMPT= RPROMPT= ; unsetopt zle_bracketed_paste 2>/dev/null'
zpty -w tab "$1"
zpty -w tab 'null-line () { echo -E - $'"'"'\0'"'"' }'
zpty -w tab 'compprefuncs=( null-line ); comppostfuncs=( null-line exit )'
zpty -w tab 'zstyle ":completion:*" list-grouped false; zstyle ":completion:*" insert-tab false'
zpty -w tab 'compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a __hits
  builtin compadd -A __hits "$@"
  [[ -n $__hits ]] || return
  print -rl -- "<match>"${^__hits}
}'
zpty -w tab 'bindkey "^M" undefined-key; bindkey "^J" undefined-key; bindkey "^I" complete-word'
zpty -w tab "$2"$'\t'
integer seen=0
while zpty -r tab; do :; done | while IFS= read -r line; do
  if [[ $line == *$'\0\r' ]]; then
    (( seen++ )) && exit 0 || continue
  fi
  (( seen )) && [[ $line == *"<match>"* ]] && print -r -- "${${line#*<match>}%$'\r'}"
done
