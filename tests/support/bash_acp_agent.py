"""A few lines of bash that speak just enough ACP to run in the tests' container image, which
has no python (tests/support/container_image.py): the Dev Container tests' external agent. The
file is committed in the test's project, so it is in the container's workspace folder, and the
definition runs it as `bash agent.sh`."""

from __future__ import annotations

# Answers initialize, session/new and session/prompt. A prompt: a file written with its own
# hands, one written through xum (`fs/write_text_file`), its own first line read through xum
# (`fs/read_text_file`), `pwd` and `id -u` run through xum's terminal, then a message saying
# what it saw. The client's lines are compact JSON, ids numbers.
BASH_AGENT = r"""#!/bin/bash
exec 7>&1  # the channel to xum, also from inside $(...)
ask() {  # send a request, print the line that answers it
  printf '%s\n' "$2" >&7
  while IFS= read -r reply; do
    [[ $reply == *"\"id\":$1,"* || $reply == *"\"id\":$1}"* ]] && { printf '%s' "$reply"; return; }
  done
}
in_terminal() {  # run $1 through xum's terminal, print its output's first line
  local made tid out
  made=$(ask "$2" '{"jsonrpc":"2.0","id":'"$2"',"method":"terminal/create","params":{"sessionId":"dc-1","command":"'"$1"'"}}')
  [[ $made =~ \"terminalId\":\"([^\"]+)\" ]] && tid=${BASH_REMATCH[1]}
  ask $(($2 + 1)) '{"jsonrpc":"2.0","id":'$(($2 + 1))',"method":"terminal/wait_for_exit","params":{"sessionId":"dc-1","terminalId":"'"$tid"'"}}' >/dev/null
  out=$(ask $(($2 + 2)) '{"jsonrpc":"2.0","id":'$(($2 + 2))',"method":"terminal/output","params":{"sessionId":"dc-1","terminalId":"'"$tid"'"}}')
  [[ $out =~ \"output\":\"([^\"\\]*) ]] && printf '%s' "${BASH_REMATCH[1]}"
}
while IFS= read -r line; do
  id=
  [[ $line =~ \"id\":([0-9]+) ]] && id=${BASH_REMATCH[1]}
  case $line in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n' "$id" ;;
    *'"method":"session/new"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"dc-1"}}\n' "$id" ;;
    *'"method":"session/prompt"'*)
      echo "made in the dev container" > from-agent.txt 2>/dev/null
      ask 900 '{"jsonrpc":"2.0","id":900,"method":"fs/write_text_file","params":{"sessionId":"dc-1","path":"'"$PWD"'/served.txt","content":"through xum\n"}}' >/dev/null
      got=$(ask 905 '{"jsonrpc":"2.0","id":905,"method":"fs/read_text_file","params":{"sessionId":"dc-1","path":"'"$PWD"'/agent.sh","limit":1}}')
      [[ $got =~ \"content\":\"([^\"\\]*) ]] && got=${BASH_REMATCH[1]} || got=none
      where=$(in_terminal pwd 910)
      who=$(in_terminal "id -u" 920)
      text="user=$(id -u) cwd=$PWD remote=${FROM_REMOTE:-none} probed=${PROBED:-none} key=${AGENT_KEY:-none} terminal=$where terminal-user=$who read=$got"
      printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"dc-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%s"}}}}\n' "$text"
      printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}\n' "$id" ;;
  esac
done
"""
