/**
 * The scripts `gatesync completion bash|zsh|fish` prints. Each asks `gatesync __complete` for
 * the candidates of the word at the cursor (the words after `gatesync`, the last one the word
 * being completed, possibly empty) and, when it has none (a file's place), lets the shell
 * complete file names. Errors of the call are dropped: a Tab never prints anything.
 *
 * A candidate may be a resource's name, read from a repository: each shell gets it as one quoted
 * word, so Tab then Enter runs nothing it carries (`$(…)`, backticks, `;`, globs). bash
 * inserts COMPREPLY as it is, so the script quotes each candidate with `printf %q`; zsh's
 * `compadd` (without -Q) and fish's insertion quote a match themselves.
 */

export const completionShells = ["bash", "zsh", "fish"] as const;
export type CompletionShell = (typeof completionShells)[number];

const bash = `# gatesync completion for bash: \`source <(gatesync completion bash)\` in ~/.bashrc,
# or save it as ~/.local/share/bash-completion/completions/gatesync
_gatesync_complete() {
  local candidate
  COMPREPLY=()
  while IFS= read -r candidate; do
    printf -v candidate '%q' "$candidate"
    COMPREPLY+=("$candidate")
  done < <(command gatesync __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}
complete -o default -F _gatesync_complete gatesync
`;

const zsh = `#compdef gatesync
# gatesync completion for zsh: \`source <(gatesync completion zsh)\` in ~/.zshrc after compinit,
# or save it as _gatesync in a directory of $fpath
_gatesync() {
  local -a candidates
  candidates=("\${(@f)$(command gatesync __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=(\${candidates:#})
  if (( \${#candidates} )); then
    compadd -- "\${candidates[@]}"
  else
    _files
  fi
}
if [ "\${funcstack[1]}" = "_gatesync" ]; then
  _gatesync "$@"
else
  compdef _gatesync gatesync
fi
`;

const fish = `# gatesync completion for fish: gatesync completion fish > ~/.config/fish/completions/gatesync.fish
function __gatesync_complete
    set -l tokens (commandline -opc)
    set -l current (commandline -ct)
    set -l candidates (command gatesync __complete $tokens[2..-1] "$current" 2>/dev/null)
    if test (count $candidates) -gt 0
        printf '%s\\n' $candidates
    else
        __fish_complete_path "$current"
    end
end
complete -c gatesync -f -a '(__gatesync_complete)'
`;

export const completionScripts: Readonly<Record<CompletionShell, string>> = { bash, zsh, fish };
