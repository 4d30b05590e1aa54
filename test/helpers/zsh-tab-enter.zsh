# zsh -f zsh-tab-enter.zsh SETUP LINE: what runs when, in a real zsh, LINE is typed, Tab pressed,
# then Enter — the line zsh's completion built, run.
#
# An interactive `zsh -f` on a pseudo-terminal (zsh/zpty) runs SETUP (compinit, and the
# completion script installed as a user installs it), then defines `gatesync` as a function that
# prints each argument it gets, one a line behind an <arg> mark (the completion script itself
# calls `command gatesync`, the launcher on the PATH). LINE is typed, Tab pressed (zsh inserts the
# single match, quoted as zsh quotes it), Enter pressed: the function prints the words zsh parsed
# from the completed line; then the shell exits. Anything the name carried that ran would leave
# its trace in the working directory.
zmodload zsh/zpty
zpty tab zsh -f -i
zpty -w tab 'PROMPT= RPROMPT= ; unsetopt zle_bracketed_paste 2>/dev/null'
zpty -w tab "$1"
# the mark is spelled in two pieces so the terminal's echo of this line carries no <arg>
zpty -w tab 'gatesync () { print -rl -- "<a""rg>"${^@}; print -r -- "<do""ne>" }'
zpty -w tab 'bindkey "^I" complete-word'
zpty -w tab "$2"$'\t'
zpty -w tab 'exit'
while zpty -r tab; do :; done | while IFS= read -r line; do
  [[ $line == *"<done>"* ]] && exit 0
  [[ $line == *"<arg>"* ]] && print -r -- "${${line#*<arg>}%$'\r'}"
done
