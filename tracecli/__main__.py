from tracecli.cli.app import main

main()
