#!/bin/sh
# A pi extension in plain sh: registers the slash command `/greet <name>`, which asks the agent
# to greet that person (sendUserMessage). With `--shout` (a boolean flag it registers) the
# request is in capitals. Needs only a POSIX shell and sed.
shout=false
while IFS= read -r line; do
    type=$(printf '%s' "$line" | sed -n 's/^{"type":"\([a-z_]*\)".*/\1/p')
    case "$type" in
    hello)
        printf '%s\n' '{"type":"register","protocol":1,"name":"greet","commands":[{"name":"greet","description":"Ask the agent to greet someone"}],"flags":[{"name":"shout","type":"boolean","default":false,"description":"Greet in capitals"}]}'
        ;;
    flags)
        case "$line" in *'"shout":true'*) shout=true ;; esac
        ;;
    command)
        id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
        name=$(printf '%s' "$line" | sed -n 's/.*"args":"\([^"\\]*\)".*/\1/p')
        text="Please greet ${name:-everyone} warmly."
        if [ "$shout" = true ]; then
            text=$(printf '%s' "$text" | tr '[:lower:]' '[:upper:]')
        fi
        printf '{"type":"call","method":"sendUserMessage","params":{"content":"%s"}}\n' "$text"
        printf '{"type":"reply","id":%s,"result":null}\n' "$id"
        ;;
    esac
done
