{#- dbt run-operation show_table_history [--args '{models: [rides], limit: 5}']
    Prints each hoodpy model's commits (CALL show_commits through run_query) and its row count. -#}
{% macro show_table_history(models=['rides', 'driver_assignments', 'ride_matches'], limit=10) %}
  {%- for name in models -%}
    {%- set relation = ref(name) -%}
    {%- set rows = run_query('select count(*) as n from ' ~ relation) -%}
    {{ print('\n' ~ relation ~ ': ' ~ rows.columns[0].values()[0] ~ ' rows') }}
    {%- set commits = run_query("call show_commits(table => '" ~ relation ~ "', limit => " ~ limit ~ ")") -%}
    {%- do commits.select(['commit_time', 'action', 'total_records_written', 'total_update_records_written',
                           'total_files_added', 'total_files_updated'])
                  .print_table(max_rows=limit, max_column_width=24) -%}
  {%- endfor -%}
{% endmacro %}
