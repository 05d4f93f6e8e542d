from xum.cli.entry import main

main()
