{#- dbt run-operation show_table_history [--args '{models: [rides], limit: 5}']
    Prints each hoodpy model's row count and commits (CALL show_commits through run_query). -#}
{% macro show_table_history(models=['rides', 'driver_assignments', 'ride_matches'], limit=10) %}
  {%- for name in models -%}
    {%- set relation = ref(name) -%}
    {%- set count = run_query('select count(*) as n from ' ~ relation) -%}
    {{ print('\n' ~ relation ~ ': ' ~ count.columns[0].values()[0] ~ ' rows') }}
    {%- set commits = run_query("call show_commits(table => '" ~ relation ~ "', limit => " ~ limit ~ ")") -%}
    {%- for row in commits.rows -%}
      {{ print('  ' ~ row['commit_time'] ~ '  ' ~ row['action'] ~ '  records written '
               ~ row['total_records_written'] ~ ', updated ' ~ row['total_update_records_written']
               ~ ', files added ' ~ row['total_files_added'] ~ ', files updated ' ~ row['total_files_updated']) }}
    {%- endfor -%}
  {%- endfor -%}
{% endmacro %}
