ls -la
export GH_TOKEN=HistTok-1109ai{{.N}}
mysql -u root -pHistMy-1110aj{{.N}} appdb
curl -u admin:HistCurl-1111ak{{.N}} https://api.example.com/v1/ping
